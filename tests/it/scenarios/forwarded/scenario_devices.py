"""A Resource test for the forwarded-args run: its child gets the user's options, not -n."""

import pytest


@pytest.mark.device_count(1, est=1.0)
def test_on_its_own_device(devices, request):
    assert len(devices) == 1
    assert request.config.getoption("numprocesses") == 0  # -n 0 last: never distributed
