"""One child process: started in a session of its own, its output streamed line by line, and
stopped as a whole tree (stack dump, then SIGTERM, then SIGKILL) so no process outlives a run.

Several trees stop together (:func:`stop_trees`): every tree gets each signal before anything
waits, so stopping N children costs one grace period, not N.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Protocol

import psutil

from simpler.contract import strip_ansi
from simpler.processes.reaper import running

__all__ = [
    "CHILD_EXITED",
    "LIVE",
    "REACHED_SUMMARY",
    "ChildProcess",
    "Launcher",
    "LiveChildren",
    "PopenLike",
    "die_with_parent",
    "fresh_interpreter",
    "signal_name",
    "stop_trees",
]

# Set when a child forked from the warm process has ended (its reader hears it at once), so
# that the executor reaps it and starts the next job now, not at its next poll.
CHILD_EXITED = threading.Event()

# pytest's closing line, with or without -q: "==== 3 passed, 1 failed in 0.52s ====".
REACHED_SUMMARY = re.compile(
    r"^(?:=+ )?(?:.*\b(?:passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?)\b"
    r"|no tests ran).* in \d+(?:\.\d+)?s(?: \([^)]*\))?(?: =+)?$"
)
DUMP_GRACE_S = 1.0
TERM_GRACE_S = 3.0
# After the child exits, how long its output may take to drain. A descendant that outlives it
# (a detached process) can hold the pipe open for as long as it lives: we stop waiting for EOF.
READER_GRACE_S = 2.0


def signal_name(returncode: int | None) -> str | None:
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


class LiveChildren:
    """Every child this process started and has not reaped: stopped on the way out."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._children: set[ChildProcess] = set()

    def add(self, child: ChildProcess) -> None:
        with self._lock:
            self._children.add(child)

    def discard(self, child: ChildProcess) -> None:
        with self._lock:
            self._children.discard(child)

    def pids(self) -> set[int]:
        """The children not reaped yet: their exit status belongs to their ``Popen``."""
        with self._lock:
            return {c.pid for c in self._children if c.returncode is None}

    def stop_all(self, *, dump: bool = False) -> None:
        """Stop every live child tree at once: never call this from a signal handler."""
        with self._lock:
            children = list(self._children)
        stop_trees(children, dump=dump)


LIVE = LiveChildren()


def fresh_interpreter(
    argv: list[str], env: dict[str, str], cwd: str | None, *, capture: bool = True
) -> subprocess.Popen[bytes]:
    """A child as a new process of its own: its session, its output piped (when captured)."""
    return subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE if capture else None,
        stderr=subprocess.STDOUT if capture else None,
        start_new_session=True,  # its own process group: a signal to us is not a signal to it
        preexec_fn=die_with_parent,
    )


class PopenLike(Protocol):
    """What a child is to :class:`ChildProcess`: ``subprocess.Popen``'s face."""

    pid: int
    returncode: int | None
    stdout: IO[bytes] | None

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


Launcher = Callable[[list[str], dict[str, str], str | None], PopenLike]


class ChildProcess:
    """A child whose output goes to ``sink`` line by line and whose last lines are kept."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: dict[str, str],
        log_path: Path | None = None,
        echo: Callable[[str], None] | None = None,
        tail_lines: int = 80,
        cwd: str | None = None,
        capture: bool = True,
        launcher: Launcher | None = None,
    ) -> None:
        """``capture=False`` leaves the child on our stdout (a terminal stays a terminal).
        ``launcher``: starts the child another way than a fresh interpreter (a fork of the
        warm process); it captures the output, and returns what stands for the Popen."""
        self.started = time.monotonic()
        self.reached_summary = False
        self.timed_out = False
        self._tail: collections.deque[str] = collections.deque(maxlen=tail_lines)
        self._echo = echo
        self._log: IO[str] | None = None
        if log_path is not None:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log = log_path.open("w", encoding="utf-8", errors="replace")
        self._popen: PopenLike = (
            launcher(list(argv), env, cwd)
            if launcher is not None and capture
            else fresh_interpreter(list(argv), env, cwd, capture=capture)
        )
        LIVE.add(self)
        self._capture = capture
        self._reader = threading.Thread(target=self._pump, daemon=True)
        if capture:
            self._reader.start()

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def tail(self) -> str:
        return "\n".join(self._tail)

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    def poll(self) -> int | None:
        return self._popen.poll()

    def wait(self, timeout: float | None = None) -> int:
        """The child's exit code; ``timeout``: subprocess.TimeoutExpired when it runs longer
        (the child is left running, for the caller to stop)."""
        try:
            returncode = self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            raise
        except BaseException:
            # Whoever waited is leaving (a signal raised through the wait): the child goes too.
            self.stop()
            if self._popen.poll() is not None:
                LIVE.discard(self)
            raise
        if self._capture:
            self._reader.join(READER_GRACE_S)  # the reader closes the pipe and the log at EOF
        elif self._log is not None:
            self._log.close()
        LIVE.discard(self)
        return returncode

    def stop(self, *, dump: bool = False) -> None:
        """Stop the whole tree: a stack dump first if asked, then SIGTERM, then SIGKILL."""
        stop_trees([self], dump=dump)

    def tree(self) -> list[psutil.Process]:
        """The child and every process below it, now."""
        try:
            root = psutil.Process(self._popen.pid)
            return [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def _pump(self) -> None:
        assert self._popen.stdout is not None
        try:
            for raw in self._popen.stdout:
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                self._tail.append(line)
                if REACHED_SUMMARY.match(strip_ansi(line).strip()):
                    self.reached_summary = True
                if self._log is not None:
                    self._log.write(line + "\n")
                    self._log.flush()  # the log is the record of a child that may die any moment
                if self._echo is not None:
                    self._echo(line)
        finally:
            self._popen.stdout.close()
            if self._log is not None:
                self._log.close()


def stop_trees(children: Iterable[ChildProcess], *, dump: bool = False) -> None:
    """Stop whole trees together: each signal goes to every tree before one bounded wait.

    A stack dump (SIGUSR1) first if asked, then SIGTERM, then SIGKILL for what is left.
    """
    owners = list(children)
    processes = [p for child in owners for p in child.tree()]
    if dump:
        _signal(processes, signal.SIGUSR1)
        _wait_gone(owners, processes, DUMP_GRACE_S)
    _signal(processes, signal.SIGTERM)
    alive = _wait_gone(owners, processes, TERM_GRACE_S)
    _signal(alive, signal.SIGKILL)
    _wait_gone(owners, alive, TERM_GRACE_S)


def _signal(processes: list[psutil.Process], signum: int) -> None:
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.send_signal(signum)


def _wait_gone(
    children: list[ChildProcess], processes: list[psutil.Process], timeout: float
) -> list[psutil.Process]:
    deadline = time.monotonic() + timeout
    alive = processes
    while alive and time.monotonic() < deadline:
        for child in children:
            child.poll()  # reap our direct children so they do not linger as zombies
        alive = [p for p in alive if running(p)]
        if alive:
            time.sleep(0.05)
    return alive


_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In the child, before exec: if the orchestrator is SIGKILLed, take this child with it.

    Linux only (prctl); elsewhere a killed orchestrator's children are left to their
    own timeouts. The child's own descendants end when it does (xdist workers lose
    their channel; pytest's subprocesses get the session's SIGHUP).
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
