"""A suite for the test quarantine (not the device quarantine of scenario_quarantine_multi):
one L2 test that always fails, one that passes, and a Resource test that always fails."""

import pytest


class TestBroken:
    def test_fails(self, worker):
        worker.run("noop")
        raise AssertionError("broken, and quarantined: it still runs")


def test_passes(worker):
    worker.run("noop")


@pytest.mark.device_count(2, est=1.0)
def test_two_cards_fail(devices):
    assert devices == [99], "broken on two cards too"
