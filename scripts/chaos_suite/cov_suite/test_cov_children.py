"""Resource children: one that passes, one that SIGKILLs itself, one hung past its timeout."""

import os
import signal
import time

import pytest
from measured import paths


@pytest.mark.device_count(1, est=1.0)
def test_child_ok(devices):
    assert paths.in_child() == 11


@pytest.mark.device_count(1, est=1.0)
def test_child_killed(devices):
    assert paths.before_kill() == 25
    os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.device_count(1, est=1.0, timeout=3)
def test_child_hangs(devices):
    assert paths.before_hang() == 14
    time.sleep(600)
