"""L2: a trigger the hang is aimed at, then victims on the same worker: only they run
``only_victims``, so its lines are in only if the processes that re-ran them saved theirs."""

import numpy as np
import pytest
from measured import paths

pytestmark = pytest.mark.runtime("host_build_graph")


class TestTrigger:
    def test_launch(self, worker):
        out = worker.run("vector_add", np.ones(8, np.float32), np.full(8, 2, np.float32))
        assert out.tolist() == [3.0] * 8
        assert paths.in_trigger() == 15


class TestVictimA:
    def test_a(self, worker):
        worker.run("noop")
        assert paths.only_victims() == 19


class TestVictimB:
    def test_b(self, worker):
        worker.run("noop")
        assert paths.only_victims() == 19
