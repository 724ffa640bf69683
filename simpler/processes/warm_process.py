"""The warm process: a child's start-up paid once, as CPython's ``forkserver`` and Android's
zygote pay it.

``python -m simpler.processes.warm_process FD [--preload NAME]... [--after-fork NAME]...``
imports what every child would, touches no device, and forks one ``pytest.main`` child per
JSON request on the SOCK_SEQPACKET socket ``FD``; the messages and what a child gets:
docs/isolation.md, "The warm process, inside". The socket's end ends it.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import inspect
import json
import os
import select
import signal
import socket
import sys
import traceback
from typing import Any

from simpler.processes.process import die_with_parent

__all__ = ["main"]

MAX_MESSAGE = 1 << 20
FATAL_SIGNALS = (signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT)
POLL_S = 0.005  # how soon a child's exit is told: most of a short child's wait


def main(argv: list[str]) -> int:
    fd, preload, after_fork = _parse(argv)
    # A run that learns it forks no child ends us with SIGTERM while we preload: stop at once,
    # unwinding (a compiler the simulator's build started is stopped with us), and leave the
    # cores to the run's tests. Once ready, the socket's end is the signal to exit.
    signal.signal(signal.SIGTERM, _stop_preloading)
    for name in preload:
        _call(name)
    # inspect maps every loaded module's file once, on its first look at a frame: coverage.py
    # looks at the stack as it starts in each measured child, and with pytest, numpy and the
    # runner loaded that map costs a child tens of milliseconds. Made here, it is inherited.
    inspect.stack()
    # What the preloads made lives as long as this process: out of the collector's sight, a
    # child's collections (pytest runs several as it ends) do not walk it again and again.
    gc.freeze()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    channel = socket.socket(fileno=fd)
    try:
        _send(channel, {"ready": os.getpid()})
    except OSError:
        return 0  # nobody is listening any more
    children: set[int] = set()
    while True:
        readable, _, _ = select.select([channel], [], [], POLL_S)
        for pid, returncode in _reaped(children):
            _send(channel, {"exited": pid, "returncode": returncode})
        if not readable:
            continue
        try:
            data, fds, _flags, _addr = socket.recv_fds(channel, MAX_MESSAGE, 1)
        except OSError:
            return 0
        if not data:
            return 0  # the orchestrator is done with us
        request = json.loads(data)
        try:
            pid = _fork(channel, request, fds, after_fork)
        except OSError as error:
            _send(channel, {"id": request["id"], "error": str(error)})
            continue
        finally:
            for passed in fds:
                os.close(passed)
        children.add(pid)
        _send(channel, {"id": request["id"], "pid": pid})


def _stop_preloading(_signum: int, _frame: object) -> None:
    raise SystemExit(0)


def warm_pytest() -> None:
    """Run pytest once, on an empty folder, with its output thrown away: the plugins of the
    environment are then imported as pytest imports them (through its assertion rewriter, so
    a child's pytest takes them as its own), and the first run's one-off work is done."""
    import tempfile

    import pytest

    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        with tempfile.TemporaryDirectory(prefix="simpler-warm-") as empty:
            pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "--rootdir", empty,
                         "-c", os.devnull, empty])  # fmt: skip
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, saved_fd in zip((1, 2), saved, strict=True):
            os.dup2(saved_fd, fd)
            os.close(saved_fd)
        os.close(null)


def _parse(argv: list[str]) -> tuple[int, list[str], list[str]]:
    fd = int(argv[0])
    preload: list[str] = []
    after_fork: list[str] = []
    for flag, value in zip(argv[1::2], argv[2::2], strict=True):
        (preload if flag == "--preload" else after_fork).append(value)
    return fd, preload, after_fork


def _call(name: str) -> None:
    module, _, function = name.partition(":")
    loaded = importlib.import_module(module)
    if function:
        getattr(loaded, function)()


def _send(channel: socket.socket, message: dict[str, Any]) -> None:
    channel.send(json.dumps(message).encode())


def _reaped(children: set[int]) -> list[tuple[int, int]]:
    done = []
    for pid in list(children):
        try:
            waited, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            children.discard(pid)
            continue
        if waited:
            children.discard(pid)
            done.append((pid, os.waitstatus_to_exitcode(status)))
    return done


def _fork(channel: socket.socket, request: dict[str, Any], fds: list[int], after: list[str]) -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:  # the child: never returns into the server's loop
        channel.close()
        code = _run_child(request, fds[0], after)
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            atexit._run_exitfuncs()  # what a fresh interpreter would run on its way out
        finally:
            os._exit(code)
    return 0  # not reached


def _run_child(request: dict[str, Any], out: int, after: list[str]) -> int:
    os.setsid()  # a session and process group of its own, as a fresh child gets
    die_with_parent()
    os.dup2(out, 1)
    os.dup2(out, 2)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    # As a fresh interpreter has them: cling (loaded with the runner's library) catches the
    # fatal signals to turn them into exceptions; a child that crashes must die of its signal.
    for signum in (signal.SIGTERM, signal.SIGCHLD, signal.SIGUSR1, *FATAL_SIGNALS):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    argv = list(request["argv"])
    sys.argv = [argv[0], *argv[3:]]  # python -m pytest ARGS: pytest sees ARGS
    _start_coverage()
    for name in after:
        _call(name)
    import pytest

    return int(pytest.main(argv[3:]))


def _start_coverage() -> None:
    """A measured run's child starts coverage.py as its .pth file would at interpreter start
    (the warm process itself is not measured: nothing of the child's code runs there)."""
    if os.environ.get("COVERAGE_PROCESS_CONFIG") or os.environ.get("COVERAGE_PROCESS_START"):
        import coverage

        coverage.process_startup(force=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
