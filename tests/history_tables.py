"""Every row of a history, a file or a server alike, and a gate that holds a server's imports
at a known point: what the tests compare stores by, and how they make "mid-import" exact."""

from __future__ import annotations

import sqlite3
import subprocess
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing, contextmanager, suppress
from pathlib import Path
from typing import Any

__all__ = ["every_row", "held_table", "wait_for_waiters", "wait_until_alone"]

DEADLINE_S = 240.0  # for a condition the server reports: an importer's start, on a busy machine
# An import waiting for a lock: for a held table, or for its run that another import holds.
_WAITING = (
    "SELECT pid FROM pg_stat_activity "
    "WHERE datname = current_database() AND wait_event_type = 'Lock'"
)
_OTHERS = (
    "SELECT count(*) FROM pg_stat_activity "
    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
)

# The import's own time (runs.imported) left out.
_TABLES = {
    "runs": 'SELECT run_id, "commit", branch, runner, platform, started, ended, complete, '
    "exit_code, suite FROM runs",
    "attempts": "SELECT * FROM attempts",
    "verdicts": "SELECT * FROM verdicts",
    "run_phases": "SELECT * FROM run_phases",
    # The suites runs name: a shard stored first names the suite of its own tests until the
    # run's other shards arrive, and that suite stays, unnamed, until a prune drops it.
    "suite_tests": "SELECT * FROM suite_tests WHERE suite IN (SELECT suite FROM runs)",
    # A shadow run's selection (--affected-shadow).
    "affected_runs": "SELECT * FROM affected_runs",
    "affected_selected": "SELECT * FROM affected_selected",
}


def every_row(store: Path | str) -> dict[str, list[tuple[Any, ...]]]:
    """Every table of a SQLite file (a path) or a server (a URL), row for row."""
    if isinstance(store, Path):
        with closing(sqlite3.connect(store)) as conn:
            return {name: _sorted(conn.execute(sql)) for name, sql in _TABLES.items()}
    import psycopg

    with psycopg.connect(store) as server:
        return {name: _sorted(server.execute(sql)) for name, sql in _TABLES.items()}


def _sorted(rows: Iterable[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """In one order whatever the store: a server sorts text by its collation, which need not
    be SQLite's byte order."""
    return sorted(rows, key=repr)


@contextmanager
def held_table(url: str, table: str) -> Iterator[Any]:
    """``table`` locked against writes (reads pass) on a connection of its own, until the
    block ends or the caller commits it: an import writes its run's rows up to its first
    write of ``table``, then waits there, in its transaction."""
    import psycopg

    gate = psycopg.connect(url)
    try:
        gate.execute(f"LOCK TABLE {table} IN EXCLUSIVE MODE")
        yield gate
    finally:
        with suppress(psycopg.Error):  # a killed server took the connection with it
            gate.close()  # rolled back: the lock goes with it


def wait_for_waiters(
    url: str, importers: Sequence[subprocess.Popen[str]], *, count: int | None = None
) -> list[int]:
    """The server pids of the sessions waiting for a lock, once ``count`` (every importer's)
    wait: for a held table, or for the run another importer of it holds. Raises if an
    importer ends first or the wait outlasts the deadline."""
    import psycopg

    count = len(importers) if count is None else count
    deadline = time.monotonic() + DEADLINE_S
    with psycopg.connect(url, autocommit=True) as watcher:
        while True:
            ended = [p.args for p in importers if p.poll() is not None]
            if ended:
                raise RuntimeError(f"an importer ended before it waited: {ended}")
            waiting = [pid for (pid,) in watcher.execute(_WAITING)]
            if len(waiting) == count:
                return waiting
            if time.monotonic() > deadline:
                raise RuntimeError(f"{len(waiting)} of {count} importers wait")
            time.sleep(0.02)  # polling a condition the server reports, not a guess at a time


def wait_until_alone(url: str) -> None:
    """Until no other session is left in the database: a killed importer's session ends,
    its transaction rolled back, once the server sees its socket close."""
    import psycopg

    deadline = time.monotonic() + DEADLINE_S
    with psycopg.connect(url, autocommit=True) as watcher:
        while watcher.execute(_OTHERS).fetchone() != (0,):
            if time.monotonic() > deadline:
                raise RuntimeError("a killed importer's session never ended")
            time.sleep(0.02)  # polling what the server reports
