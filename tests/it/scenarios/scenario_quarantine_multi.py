"""A pooled test whose card cannot be reset (quarantine), and a test that needs two cards."""

import pytest


def test_pooled_launch(worker):
    worker.run("noop")


@pytest.mark.device_count(2, est=1.0)
def test_needs_both_cards(devices):
    assert len(devices) == 2
