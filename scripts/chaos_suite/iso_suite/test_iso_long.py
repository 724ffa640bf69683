"""An L2 file whose middle test runs long: CHAOS_ISO_MARK names the file it touches when its
workload starts, so that a signal is sent while it runs."""

import os
import time
from pathlib import Path


def test_first():
    pass


def test_long():
    mark = os.environ.get("CHAOS_ISO_MARK")
    if mark:
        Path(mark).touch()
    time.sleep(60)  # the workload the signal cuts


def test_after():
    pass
