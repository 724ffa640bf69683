"""Pooled tests for the forwarded-args run: a fault that poison-skips the victims behind it.

The fault comes from outside (``--simpler-sim-fault hang@TestTrigger#1``); ``TestDeselected`` is
named by ``--deselect`` and must never run in any process.
"""

import numpy as np


def _add(worker):
    out = worker.run("vector_add", np.ones(4, np.float32), np.full(4, 2, np.float32))
    assert out.tolist() == [3.0] * 4


class TestTrigger:
    def test_launch(self, worker):
        _add(worker)


class TestVictim1:
    def test_noop(self, worker):
        worker.run("noop")


class TestVictim2:
    def test_add(self, worker):
        _add(worker)


class TestDeselected:
    def test_never_runs(self, worker):
        raise AssertionError("--deselect was not honoured")
