"""Tests that leave processes behind, and tests that hang until the orchestrator is signalled.

Each notes ``<tag> <pid>`` in the file named by ``SIMPLER_IT_PIDS`` so that the integration
test knows which processes to look for (and when the moment to send a signal has come).
"""

import os
import subprocess
import time

import pytest

_ABANDONED = []  # kept referenced: a running Popen that is collected warns, failing the test


def _note(tag, pid):
    path = os.environ.get("SIMPLER_IT_PIDS")
    if path:
        with open(path, "a") as notes:
            notes.write(f"{tag} {pid}\n")


def _detached_sleeper():
    # Its own session: no signal to the test's process group reaches it, and it outlives
    # the child pytest (re-parented to the nearest subreaper: the orchestrator).
    sleeper = subprocess.Popen(["sleep", "600"], start_new_session=True)
    _ABANDONED.append(sleeper)
    return sleeper.pid


@pytest.mark.device_count(1, est=1.0)
def test_passes_quickly(devices):
    assert len(devices) == 1


@pytest.mark.device_count(1, est=1.0)
def test_leaves_a_detached_process(devices):
    _note("detached", _detached_sleeper())


@pytest.mark.device_count(1, est=1.0, timeout=120)
def test_leaves_a_detached_process_then_hangs(devices):
    _note("detached-then-hang", _detached_sleeper())
    time.sleep(120)


def test_hangs_in_l2():
    _note("l2", os.getpid())
    time.sleep(120)
