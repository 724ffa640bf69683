"""A child process: trees stop together, a waiter that leaves takes its child, a held pipe."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import psutil
import pytest

from simpler.scheduler.process import LIVE, ChildProcess, stop_trees

PY = sys.executable


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _slow_to_stop(stamp: Path) -> ChildProcess:
    """A child that notes when SIGTERM came, then takes a second to exit."""
    code = (
        "import signal, sys, time\n"
        "def term(*_):\n"
        f"    open({str(stamp)!r}, 'w').write(repr(time.time()))\n"
        "    time.sleep(1.0)\n"
        "    sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, term)\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    return ChildProcess([PY, "-c", code], env=dict(os.environ))


def _ready(*children: ChildProcess) -> None:
    deadline = time.monotonic() + 30
    while not all(c.tail == "ready" for c in children) and time.monotonic() < deadline:
        time.sleep(0.02)


def test_every_tree_gets_sigterm_before_anything_waits(tmp_path: Path) -> None:
    stamps = [tmp_path / "a", tmp_path / "b"]
    children = [_slow_to_stop(stamp) for stamp in stamps]
    _ready(*children)
    stop_trees(children)
    assert [child.wait() for child in children] == [0, 0]
    first, second = (float(stamp.read_text()) for stamp in stamps)
    # One after the other, the second would get SIGTERM only after the first's second.
    assert abs(first - second) < 0.6
    assert not LIVE.pids() & {c.pid for c in children}


class _Leave(Exception):
    pass


@pytest.fixture
def leave_on_sigusr2() -> Iterator[None]:
    def leave(_signum: int, _frame: FrameType | None) -> None:
        raise _Leave

    previous = signal.signal(signal.SIGUSR2, leave)
    yield
    signal.signal(signal.SIGUSR2, previous)


@pytest.mark.usefixtures("leave_on_sigusr2")
def test_a_waiter_that_leaves_takes_its_child_with_it() -> None:
    child = ChildProcess(
        [PY, "-c", "print('ready', flush=True); import time; time.sleep(60)"], env=dict(os.environ)
    )
    _ready(child)
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGUSR2))
    timer.start()
    with pytest.raises(_Leave):
        child.wait()  # the signal's exception goes through the wait
    timer.join()
    assert _gone(child.pid) and child.pid not in LIVE.pids()


def test_a_detached_grandchild_holding_the_output_pipe_does_not_hang_the_wait() -> None:
    code = (
        "import subprocess\n"
        "sleeper = subprocess.Popen(['sleep', '60'], start_new_session=True)\n"  # our stdout
        "print('sleeper', sleeper.pid, flush=True)\n"
    )
    child = ChildProcess([PY, "-c", code], env=dict(os.environ))
    started = time.monotonic()
    try:
        assert child.wait() == 0
        assert time.monotonic() - started < 20  # not the sleeper's 60 s
        assert child.tail.startswith("sleeper ")
    finally:
        sleeper = int(child.tail.split()[1]) if child.tail.startswith("sleeper ") else None
        if sleeper is not None and not _gone(sleeper):
            os.kill(sleeper, signal.SIGKILL)
