"""Chaos suite, Resource part: a child that fails the way CHAOS_CHILD says, and one that works."""

import os
import signal
import subprocess
import time

import pytest

from simpler.runner import open_runner

_ABANDONED: list[subprocess.Popen[bytes]] = []


@pytest.mark.device_count(1, est=1.0)
def test_child_on_its_device(simpler_platform, devices):
    runner = open_runner(simpler_platform, devices[0])
    runner.init()
    runner.run("noop")
    assert runner.finalize() == 0


@pytest.mark.device_count(1, est=2.0)
def test_child_fault(devices):
    fault = os.environ.get("CHAOS_CHILD", "")
    print(f"child fault {fault or 'none'} on devices {devices}", flush=True)
    if fault == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif fault == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif fault in ("hang", "slow"):
        time.sleep(600)
    elif fault == "detach":
        # A grandchild in a session of its own, left running: the run must reap it. Kept
        # referenced: a running Popen that is collected warns, and warnings are errors here.
        _ABANDONED.append(subprocess.Popen(["sleep", "600"], start_new_session=True))


if os.environ.get("CHAOS_TWO_CARDS") == "1":
    # Only the retired-card scenario has the two-card job: elsewhere a retired card would
    # fail it too, and those scenarios are about something else.

    @pytest.mark.device_count(2, est=1.0)
    def test_two_cards(devices):
        assert len(devices) == 2
