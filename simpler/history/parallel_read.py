"""Read many report files on every core while one process writes the database.

Reading a report (parsing each line, attributing each failure) costs more than storing it,
and SQLite takes one writer at a time: a backfill of a long history (``simpler history
import reports/*.jsonl``) reads its files in worker processes, a few ahead of the writer,
and the writer stores them in the order given, so the result is the import the files would
get one at a time. A single file, or a machine with one core, is read in this process: a
pool would only add its start-up.
"""

from __future__ import annotations

import multiprocessing
import os
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


def worker_count(files: int) -> int:
    """Processes to read ``files`` files with: none (read here) below two files or cores."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    usable = min(files, cores or 1)
    return usable if usable >= 2 else 0


def read_in_order(read: Callable[[Path], _Read], paths: Sequence[Path]) -> Iterator[_Read]:
    """``read(path)`` for each path, yielded in the paths' order; an error is raised when its
    file's turn comes, so the files before it are yielded (and stored) first.

    ``read`` must be a module-level function: the workers are started fresh (forkserver),
    never forked from a process that may hold threads and a database connection.
    """
    workers = worker_count(len(paths))
    if workers == 0:
        for path in paths:
            yield read(path)
        return
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        pending: deque[Future[_Read]] = deque()
        queued = iter(paths)
        try:
            for path in queued:
                pending.append(pool.submit(read, path))
                if len(pending) >= workers * _AHEAD_PER_WORKER:
                    break
            while pending:
                done = pending.popleft().result()
                for path in queued:  # one in, one out
                    pending.append(pool.submit(read, path))
                    break
                yield done
        finally:
            for future in pending:
                future.cancel()
