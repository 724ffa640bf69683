"""Resource tests: a quick one first (the longest estimate), then workloads of CHAOS_ISO_WORK
seconds each (default 1), with estimates that let them start."""

import os
import time

import pytest

WORK_S = float(os.environ.get("CHAOS_ISO_WORK", "1"))


@pytest.mark.device_count(1, est=2.0)
def test_quick(devices):
    assert len(devices) == 1


@pytest.mark.parametrize("n", range(3))
@pytest.mark.device_count(1, est=1.0)
def test_workload(devices, n):
    time.sleep(WORK_S)  # the workload: the deadline or a signal cuts it, it waits for nothing
