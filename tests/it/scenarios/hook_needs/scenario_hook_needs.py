"""Runtimes from a class attribute, device counts from the conftest's CASES: no markers."""

import pytest

# What the conftest's CASES say, written out: a test must not check the hook by the hook.
EXPECTED_DEVICES = {"single": 1, "pair": 2}


class TestAlpha:
    _st_runtime = "alpha"

    def test_runs_on_alpha(self, worker):
        assert worker.key.runtime == "alpha"
        assert worker.run("noop") == "noop on alpha"

    def test_fault(self, worker):
        worker.run("fault_once")

    def test_after_the_fault(self, worker):
        assert worker.state == "rebuilt"
        assert worker.run("noop") == "noop on alpha"


class TestBeta:
    _st_runtime = "beta"

    def test_caught_fault(self, worker):
        with pytest.raises(RuntimeError, match="507046"):
            worker.run("fault_once")

    def test_runs_on_beta(self, worker):
        assert worker.key.runtime == "beta"
        assert worker.run("noop") == "noop on beta"


class TestSharded:
    @pytest.mark.parametrize("case", sorted(EXPECTED_DEVICES))
    def test_case(self, case, devices):
        assert len(devices) == EXPECTED_DEVICES[case]
