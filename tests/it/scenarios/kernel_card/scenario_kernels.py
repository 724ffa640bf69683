"""A suite on the kcard card: one test per kernel, and one that uses no device."""

import numpy as np

from simpler.runner import Out


def test_fill(worker):
    out = worker.run("fill", Out(np.zeros(3)), 1.5)
    assert out.tolist() == [1.5, 1.5, 1.5]


def test_twice(worker):
    out = worker.run("twice", np.arange(3.0), Out(np.zeros(3)))
    assert out.tolist() == [0.0, 2.0, 4.0]


def test_no_device():
    assert sum(range(4)) == 6
