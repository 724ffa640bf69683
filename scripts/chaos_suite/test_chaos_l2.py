"""Chaos suite, L2 part: one trigger class the faults aim at, then victims on the same worker."""

import numpy as np
import pytest

pytestmark = pytest.mark.runtime("host_build_graph")


def _add(worker):
    out = worker.run("vector_add", np.ones(8, np.float32), np.full(8, 2, np.float32))
    assert out.tolist() == [3.0] * 8


class TestTrigger:
    def test_launch(self, worker):
        _add(worker)


class TestVictimA:
    def test_add(self, worker):
        _add(worker)


class TestVictimB:
    def test_matmul(self, worker):
        a = np.eye(4, dtype=np.float32)
        assert (worker.run("matmul", a, a) == a).all()


class TestVictimC:
    def test_noop(self, worker):
        worker.run("noop")
