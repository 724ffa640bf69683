"""A small device suite for the history's ten seeded runs (tests/it/test_history_runs.py).

File order is run order on the one pooled worker of ``--device 0``: the stable tests, the
broken one, then the test a fault is injected into (``hang@TestFlaky#1``: it fails and
passes on its retry), then its victim, which a card that cannot be reset
(``force_reset_fail``) leaves poison-skipped until the retry phase re-runs it.
"""

import numpy as np
import pytest
from trigger_victims import add

pytestmark = pytest.mark.runtime("host_build_graph")


class TestStable:
    def test_noop(self, worker):
        worker.run("noop")

    def test_add(self, worker):
        add(worker)


class TestBroken:
    def test_always_fails(self, worker):
        out = worker.run("vector_add", np.ones(2, np.float32), np.ones(2, np.float32))
        assert out.tolist() == [3.0, 3.0], "the golden is wrong on purpose: this test is broken"


class TestFlaky:
    def test_launch(self, worker):
        add(worker)


class TestVictim:
    def test_add_after_the_fault(self, worker):
        add(worker)
