"""Resource tests that fail the ways children fail: a crash, a hang, a plain failure."""

import os
import signal
import time

import pytest


@pytest.mark.device_count(1, est=1.0)
def test_passes_on_its_device(devices):
    assert len(devices) == 1


@pytest.mark.device_count(2, est=1.0)
def test_crashes_with_sigsegv(devices):
    print("about to crash on devices", devices, flush=True)
    os.kill(os.getpid(), signal.SIGSEGV)


@pytest.mark.device_count(1, est=1.0, timeout=3)
def test_hangs_past_its_timeout(devices):
    print("hanging", flush=True)
    time.sleep(60)


@pytest.mark.device_count(1, est=1.0)
def test_fails_an_assertion(devices):
    print("::error::this line must not become a workflow command")
    assert devices == [99], "wrong devices"
