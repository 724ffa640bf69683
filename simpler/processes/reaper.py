"""Processes a run left behind: adopted as orphans, found among our descendants, and stopped.

The orchestrator makes itself a *child subreaper* (Linux ``prctl``), so what a test started
and abandoned stays our descendant; :func:`stop_leftovers` stops every descendant (SIGTERM,
one bounded wait, SIGKILL) and says what each was. Only descendants are ever signalled
(docs/running.md, "Nothing left behind").
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shlex
import signal
import sys
import time
from collections.abc import Collection, Iterator
from dataclasses import asdict, dataclass, replace

import psutil

__all__ = [
    "Leftover",
    "child_subreaper",
    "descendants",
    "is_child_subreaper",
    "pid_running",
    "reap_zombies",
    "running",
    "stop_leftovers",
]

_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
GRACE_S = 3.0  # after SIGTERM, then again after SIGKILL
PASSES = 3  # a leftover that dies may leave children of its own, re-parented to us
_POLL_S = 0.05
_CMDLINE_CHARS = 200


@dataclass(frozen=True)
class Leftover:
    """A process found alive after the tests, and how it was stopped."""

    pid: int
    name: str
    cmdline: str
    test: str | None  # the test that was running when it was started (PYTEST_CURRENT_TEST)
    signal: str  # the signal that ended it: "SIGTERM" or "SIGKILL" ("" if it outlived both)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _prctl(option: int, arg: object) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    zero = ctypes.c_ulong(0)
    return int(libc.prctl(ctypes.c_int(option), arg, zero, zero, zero))


def is_child_subreaper() -> bool | None:
    """Whether this process is a child subreaper; None where that cannot be asked (not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    flag = ctypes.c_int(0)
    try:
        if _prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(flag)) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return bool(flag.value)


def _set_child_subreaper(on: bool) -> bool:
    try:
        return _prctl(_PR_SET_CHILD_SUBREAPER, ctypes.c_ulong(int(on))) == 0
    except (OSError, AttributeError):
        return False


@contextlib.contextmanager
def child_subreaper() -> Iterator[bool]:
    """Adopt orphaned descendants for the duration; yields whether that works here.

    A no-op (yielding False) where ``prctl`` is not available. The previous setting is
    restored on the way out, so a process that was not a subreaper does not stay one.
    """
    previous = is_child_subreaper()
    adopted = previous is not None and _set_child_subreaper(True)
    try:
        yield adopted
    finally:
        if adopted and previous is False:
            _set_child_subreaper(False)


def descendants() -> list[psutil.Process]:
    """Every live process below this one, at any depth."""
    try:
        return psutil.Process(os.getpid()).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def reap_zombies(keep: Collection[int | psutil.Process] = ()) -> None:
    """Collect the exit status of adopted orphans that ended, so they leave the process table.

    ``keep``: processes (or pids) whose exit status somebody else (a ``subprocess.Popen``)
    still waits for.
    """
    for process in _direct_children():
        if not _kept(process, keep) and _status(process) == psutil.STATUS_ZOMBIE:
            _reap(process.pid)


def stop_leftovers(
    keep: Collection[int | psutil.Process] = (), grace_s: float = GRACE_S
) -> list[Leftover]:
    """Stop every descendant but ``keep`` (processes or pids): SIGTERM, a bounded wait, SIGKILL.

    What a kept process started is still stopped: ``keep`` spares a process, not its tree.
    """
    stopped: list[Leftover] = []
    for _ in range(PASSES):
        reap_zombies(keep)
        found = [p for p in descendants() if not _kept(p, keep) and running(p)]
        if not found:
            break
        stopped += _stop(found, keep, grace_s)
    reap_zombies(keep)
    return stopped


def _kept(process: psutil.Process, keep: Collection[int | psutil.Process]) -> bool:
    # A psutil.Process equals another only with the same pid and start time: no pid reuse.
    return process in keep or process.pid in keep


def _stop(
    processes: list[psutil.Process], keep: Collection[int | psutil.Process], grace_s: float
) -> list[Leftover]:
    described = [_describe(p) for p in processes]  # before they go: a zombie has no cmdline
    _send(processes, signal.SIGTERM)
    alive = _wait_gone(processes, keep, grace_s)
    _send(alive, signal.SIGKILL)
    survivors = {p.pid for p in _wait_gone(alive, keep, grace_s)}
    killed = {p.pid for p in alive}
    return [replace(left, signal=_ended_by(left.pid, killed, survivors)) for left in described]


def _ended_by(pid: int, killed: set[int], survivors: set[int]) -> str:
    if pid in survivors:
        return ""  # it outlived SIGKILL too (uninterruptible sleep): still named
    return "SIGKILL" if pid in killed else "SIGTERM"


def _describe(process: psutil.Process) -> Leftover:
    name, cmdline, test = "?", "", None
    with contextlib.suppress(psutil.Error):
        name = process.name()
    with contextlib.suppress(psutil.Error):
        cmdline = shlex.join(process.cmdline())[:_CMDLINE_CHARS]
    with contextlib.suppress(psutil.Error):
        test = _test_of(process.environ().get("PYTEST_CURRENT_TEST"))
    return Leftover(pid=process.pid, name=name, cmdline=cmdline, test=test, signal="")


def _test_of(current: str | None) -> str | None:
    """``tests/a.py::test_x (call)`` -> ``tests/a.py::test_x``."""
    if not current:
        return None
    nodeid, _, stage = current.rpartition(" (")
    return nodeid if nodeid and stage.endswith(")") else current


def _send(processes: list[psutil.Process], signum: int) -> None:
    for process in processes:
        # psutil refuses to signal a pid that was reused by another process since we listed it.
        with contextlib.suppress(psutil.Error):
            process.send_signal(signum)


def _wait_gone(
    processes: list[psutil.Process], keep: Collection[int | psutil.Process], timeout: float
) -> list[psutil.Process]:
    """Wait until each has ended (a zombie has); what is still running after ``timeout``."""
    deadline = time.monotonic() + timeout
    alive = processes
    while alive:
        reap_zombies(keep)
        alive = [p for p in alive if running(p)]
        if not alive or time.monotonic() >= deadline:
            break
        time.sleep(_POLL_S)
    return alive


def _direct_children() -> list[psutil.Process]:
    try:
        return psutil.Process(os.getpid()).children()
    except psutil.NoSuchProcess:
        return []


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def _status(process: psutil.Process) -> str | None:
    try:
        return str(process.status())
    except psutil.Error:
        return None


def running(process: psutil.Process) -> bool:
    """Whether ``process`` still runs: a zombie has ended (its exit is only not yet read)."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def pid_running(pid: int) -> bool:
    """Whether the process ``pid`` still runs (a zombie has ended)."""
    try:
        return running(psutil.Process(pid))
    except psutil.Error:
        return False
