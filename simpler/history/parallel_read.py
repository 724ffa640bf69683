"""Read many report files on every core while one process writes the database.

Reading a report costs more than storing it, and SQLite takes one writer at a time: a
backfill's files are read in worker processes, a few ahead of the writer, which stores them
in the order given (the import the files would get one at a time). A single file, or one
core, is read in this process: a pool would only add its start-up.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import TypeVar

__all__ = ["read_in_order", "worker_count"]

_Read = TypeVar("_Read")
# Files read ahead of the writer, per worker: enough to keep each busy while the writer
# stores one, few enough that the parsed runs waiting do not pile up in memory.
_AHEAD_PER_WORKER = 2
_PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies


def worker_count(files: int) -> int:
    """Processes to read ``files`` files with: none (read here) below two files or cores."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    usable = min(files, cores or 1)
    return usable if usable >= 2 else 0


def read_in_order(read: Callable[[Path], _Read], paths: Sequence[Path]) -> Iterator[_Read]:
    """``read(path)`` for each path, yielded in the paths' order; an error is raised when its
    file's turn comes, so the files before it are yielded (and stored) first.

    ``read`` must be a module-level function: the workers are started fresh (spawn), never
    forked from a process that holds a database connection, and as the importer's own
    children, so that they die with it (:func:`_die_with`).
    """
    workers = worker_count(len(paths))
    if workers == 0:
        for path in paths:
            yield read(path)
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_die_with, initargs=(os.getpid(),)
    ) as pool:
        pending: deque[Future[_Read]] = deque()
        queued = iter(paths[1:])
        try:
            for path in queued:
                pending.append(pool.submit(read, path))
                if len(pending) >= workers * _AHEAD_PER_WORKER:
                    break
            # The first file is read here while the readers start (a fresh interpreter each,
            # importing the importer: most of what one file's read costs), not waited for.
            yield read(paths[0])
            while pending:
                done = pending.popleft().result()
                for path in queued:  # one in, one out
                    pending.append(pool.submit(read, path))
                    break
                yield done
        finally:
            for future in pending:
                future.cancel()


def _die_with(importer: int) -> None:
    """A reader's first act: die when the importer does. An import killed with SIGKILL (a
    cancelled CI job) runs no clean-up of its own, and a reader left behind waits forever
    for work (the chaos cell "history: no reader left" saw three). The signal follows the
    thread that started the reader: the pool starts readers on submit, in the importer's
    calling thread, which lives as long as the import."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != importer:  # the importer died before the line above took effect
        os._exit(1)
