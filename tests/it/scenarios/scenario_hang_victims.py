"""A device fault in the first class, then five classes on the same pooled worker.

The fault is injected from outside (``--simpler-sim-fault hang@TestTrigger``), so the
trigger's code is an ordinary launch, as in a real suite.
"""

import numpy as np
import pytest

pytestmark = pytest.mark.runtime("host_build_graph")


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
    def test_noop(self, worker):
        worker.run("noop")


class TestVictim3:
    def test_add(self, worker):
        _add(worker)


class TestVictim4:
    def test_noop(self, worker):
        worker.run("noop")


class TestVictim5:
    def test_add(self, worker):
        _add(worker)
