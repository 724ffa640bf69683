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

from simpler.processes.process import LIVE, ChildProcess, stop_trees

PY = sys.executable


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _stops_only_with_its_peer(stamp: Path, peer: Path) -> ChildProcess:
    """A child that, on SIGTERM, notes it and exits only once its peer got SIGTERM too.

    Signalled one tree at a time, the first would never see its peer's note: it would hang
    until SIGKILL. The loop's own limit only ends a child nobody stops at all.
    """
    code = (
        "import os, signal, sys, time\n"
        "def term(*_):\n"
        f"    open({str(stamp)!r}, 'w').close()\n"
        "    for _ in range(60000):\n"
        f"        if os.path.exists({str(peer)!r}):\n"
        "            sys.exit(0)\n"
        "        time.sleep(0.001)\n"
        "    sys.exit(3)\n"
        "signal.signal(signal.SIGTERM, term)\n"
        "print('ready', flush=True)\n"
        "time.sleep(600)\n"
    )
    return ChildProcess([PY, "-c", code], env=dict(os.environ))


def _ready(*children: ChildProcess) -> None:
    deadline = time.monotonic() + 60  # only guards against a child that never starts
    while not all(c.tail == "ready" for c in children):
        assert time.monotonic() < deadline, [c.tail for c in children]
        time.sleep(0.02)


def test_every_tree_gets_sigterm_before_anything_waits(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    children = [_stops_only_with_its_peer(a, peer=b), _stops_only_with_its_peer(b, peer=a)]
    _ready(*children)
    stop_trees(children)
    # Both left through their SIGTERM handler: each saw the other's SIGTERM while alive.
    assert [child.wait() for child in children] == [0, 0]
    assert not LIVE.pids() & {c.pid for c in children}


class _Leave(Exception):
    pass


@pytest.fixture
def leave_on_sigusr2() -> Iterator[threading.Event]:
    """SIGUSR2 raises ``_Leave`` in the main thread, once; the event says it did."""
    left = threading.Event()

    def leave(_signum: int, _frame: FrameType | None) -> None:
        if not left.is_set():  # a repeat must not cut the wait's cleanup short
            left.set()
            raise _Leave

    previous = signal.signal(signal.SIGUSR2, leave)
    yield left
    signal.signal(signal.SIGUSR2, previous)


def test_a_waiter_that_leaves_takes_its_child_with_it(
    monkeypatch: pytest.MonkeyPatch, leave_on_sigusr2: threading.Event
) -> None:
    child = ChildProcess(
        [PY, "-c", "print('ready', flush=True); import time; time.sleep(600)"],
        env=dict(os.environ),
    )
    _ready(child)
    waiting = threading.Event()
    wait_for_exit = child._popen.wait

    def wait_noting_it(timeout: float | None = None) -> int:
        waiting.set()
        return wait_for_exit(timeout)

    monkeypatch.setattr(child._popen, "wait", wait_noting_it)
    main_thread = threading.get_ident()

    def leave_once_it_waits() -> None:
        if not waiting.wait(60):  # no wait ever began: end the child, fail, do not hang
            child.stop()
            return
        # Until the handler ran: a signal that lands just before waitpid() blocks is only
        # handled when waitpid() returns, so the next one is what interrupts the wait.
        for _ in range(1200):
            signal.pthread_kill(main_thread, signal.SIGUSR2)
            if leave_on_sigusr2.wait(0.05):
                return
        child.stop()

    signaller = threading.Thread(target=leave_once_it_waits)
    signaller.start()
    try:
        with pytest.raises(_Leave):
            child.wait()  # the signal's exception goes through the wait
    finally:
        signaller.join()
    assert _gone(child.pid) and child.pid not in LIVE.pids()


def test_a_detached_grandchild_holding_the_output_pipe_does_not_hang_the_wait() -> None:
    code = (
        "import subprocess\n"
        "sleeper = subprocess.Popen(['sleep', '600'], start_new_session=True)\n"  # our stdout
        "print('sleeper', sleeper.pid, flush=True)\n"
    )
    child = ChildProcess([PY, "-c", code], env=dict(os.environ))
    returned: list[int] = []
    waiter = threading.Thread(target=lambda: returned.append(child.wait()), daemon=True)
    waiter.start()
    waiter.join(60)  # only guards against the hang itself: the sleeper holds the pipe 600 s
    sleeper = int(child.tail.split()[1]) if child.tail.startswith("sleeper ") else None
    try:
        assert returned == [0], "the wait is still waiting for the pipe to close"
        # The sleeper still holds the pipe: the wait did not need its end of file.
        assert sleeper is not None and not _gone(sleeper)
    finally:
        if sleeper is not None and not _gone(sleeper):
            os.kill(sleeper, signal.SIGKILL)
