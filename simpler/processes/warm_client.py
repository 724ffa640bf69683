"""The orchestrator's side of the warm process (``simpler.processes.warm_process``): start it
once, ask it for a forked child per job, and see each child as ``subprocess.Popen`` shows one.

A child's output comes through a pipe read here, its pid is a real process's, its exit comes
back from the warm process (docs/isolation.md, "The warm process, inside"). When the warm
process cannot start, or dies, children start fresh and :attr:`WarmProcess.fallback` says why.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from typing import IO, Any

from simpler.processes.process import CHILD_EXITED, die_with_parent
from simpler.processes.reaper import pid_running

__all__ = ["ForkedChild", "WarmProcess", "WarmProcessGone"]

READY_TIMEOUT_S = 120.0  # the preloads build the runner's library on a first run


class WarmProcessGone(OSError):
    """The warm process is not there to fork a child (never started, or died)."""


class WarmProcess:
    def __init__(self, preload: list[str], after_fork: list[str], env: dict[str, str]) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        flags = [f for name in preload for f in ("--preload", name)]
        flags += [f for name in after_fork for f in ("--after-fork", name)]
        self._process = subprocess.Popen(
            [sys.executable, "-m", "simpler.processes.warm_process", str(theirs.fileno()), *flags],
            env=env,
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=die_with_parent,
        )
        theirs.close()
        self._channel = ours
        self._lock = threading.Lock()  # one request at a time on the channel
        self._changed = threading.Condition()
        self._started: dict[int, dict[str, Any]] = {}  # request id -> the reply
        self._exits: dict[int, int] = {}  # pid -> returncode
        self._next_id = 0
        self.gone: str | None = None  # why it cannot fork any more
        self.forked = 0
        self._ready = threading.Event()  # its preloads are done: it forks from now on
        # Started now, ready later: the preloads run while the run does other work.
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self._process.pid

    def launch(self, argv: list[str], env: dict[str, str], cwd: str | None) -> ForkedChild:
        """A forked child running ``argv`` (``python -m pytest ...``); WarmProcessGone when
        the warm process cannot fork it."""
        if not self._ready.wait(READY_TIMEOUT_S) or self.gone is not None:
            raise WarmProcessGone(self.gone or "the warm process did not start")
        read_end, write_end = os.pipe()
        with self._lock:
            self._next_id += 1
            request_id = self._next_id
            message = {"id": request_id, "argv": argv, "env": env, "cwd": cwd or os.getcwd()}
            try:
                socket.send_fds(self._channel, [json.dumps(message).encode()], [write_end])
            except OSError as error:
                self.gone = f"the warm process is gone ({error})"
            finally:
                os.close(write_end)
        reply = self._reply_to(request_id)
        if reply is None or "pid" not in reply:
            os.close(read_end)
            why = (reply or {}).get("error") or self.gone or "no answer"
            raise WarmProcessGone(f"the warm process could not fork: {why}")
        self.forked += 1
        return ForkedChild(self, int(reply["pid"]), os.fdopen(read_end, "rb"))

    def returncode_of(self, pid: int, timeout: float | None) -> int | None:
        """The child's exit code once reaped; None when ``timeout`` passed first."""
        end = None if timeout is None else time.monotonic() + timeout
        with self._changed:
            while pid not in self._exits:
                if self.gone is not None and not pid_running(pid):
                    return -9  # its parent died and took it along (PDEATHSIG)
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    return None
                self._changed.wait(0.2 if left is None else min(left, 0.2))
            return self._exits[pid]

    def close(self, *, wait: bool = True) -> None:
        """Ends the warm process: the end of its socket is its signal to exit. ``wait=False``
        only gives that signal (SIGTERM to one still preloading): a later ``close()`` waits."""
        with self._changed:
            self.gone = self.gone or "the warm process was closed"
        if not wait and not self._ready.is_set():
            # Still preloading, for a run that forks no child: its preloads would only take
            # the cores from the run's tests. SIGTERM stops them (it has no child yet).
            with contextlib.suppress(OSError):
                self._process.terminate()
        with contextlib.suppress(OSError):  # wakes our reader, ends the warm process
            self._channel.shutdown(socket.SHUT_RDWR)
        self._ready.set()
        if not wait:
            return
        self._reader.join(timeout=5)
        self._channel.close()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def _reply_to(self, request_id: int) -> dict[str, Any] | None:
        with self._changed:
            while request_id not in self._started and self.gone is None:
                self._changed.wait(0.2)
            return self._started.pop(request_id, None)

    def _read(self) -> None:
        while True:
            message = self._receive(timeout=None)
            with self._changed:
                if message is None:
                    self.gone = self.gone or "the warm process ended"
                elif "ready" in message:
                    self._ready.set()
                elif "exited" in message:
                    self._exits[int(message["exited"])] = int(message["returncode"])
                    CHILD_EXITED.set()
                elif "id" in message:
                    self._started[int(message["id"])] = message
                self._changed.notify_all()
            if message is None:
                self._ready.set()  # nobody waits for a start that will never come
                return

    def _receive(self, timeout: float | None) -> dict[str, Any] | None:
        try:
            self._channel.settimeout(timeout)
            data = self._channel.recv(1 << 16)
        except (OSError, TimeoutError):
            return None
        return json.loads(data) if data else None


class ForkedChild:
    """A forked child, with the part of ``subprocess.Popen``'s face ChildProcess uses."""

    def __init__(self, warm: WarmProcess, pid: int, stdout: IO[bytes]) -> None:
        self._warm = warm
        self.pid = pid
        self.stdout: IO[bytes] | None = stdout
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._warm.returncode_of(self.pid, timeout=0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self._warm.returncode_of(self.pid, timeout)
        if self.returncode is None:
            raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
        return self.returncode
