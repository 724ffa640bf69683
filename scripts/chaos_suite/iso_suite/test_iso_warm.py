"""A Resource test that, forked from the warm process and asked to (CHAOS_ISO_KILL_WARM=1),
kills that warm process: the chaos cell checks the run carries on in fresh interpreters."""

import os
import signal
from pathlib import Path

import pytest


@pytest.mark.device_count(2, est=30.0)  # the longest estimate and every device: it runs first
def test_kills_the_warm_process(devices):
    parent = os.getppid()
    cmdline = Path(f"/proc/{parent}/cmdline").read_bytes()
    if os.environ.get("CHAOS_ISO_KILL_WARM") == "1" and b"warm_process" in cmdline:
        os.kill(parent, signal.SIGKILL)
        signal.pause()  # until its parent-death signal: this child dies with the warm process
