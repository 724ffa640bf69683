"""Every row of a history, a file or a server alike, and a gate that holds a server's imports
at a known point: what the tests compare stores by, and how they make "mid-import" exact."""

from __future__ import annotations

import sqlite3
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

__all__ = ["every_row", "held_table", "wait_for_waiters"]

# Ordered by each table's key; the import's own time (runs.imported) left out.
_TABLES = {
    "runs": 'SELECT run_id, "commit", branch, runner, platform, started, ended, complete, '
    "exit_code, suite FROM runs ORDER BY run_id",
    "attempts": "SELECT * FROM attempts ORDER BY 1, 2, 3, 4",
    "verdicts": "SELECT * FROM verdicts ORDER BY 1, 2",
    "run_phases": "SELECT * FROM run_phases ORDER BY 1, 2, 3",
    # The suites runs name: a shard stored first names the suite of its own tests until the
    # run's other shards arrive, and that suite stays, unnamed, until a prune drops it.
    "suite_tests": "SELECT * FROM suite_tests WHERE suite IN (SELECT suite FROM runs) "
    "ORDER BY 1, 2",
}


def every_row(store: Path | str) -> dict[str, list[tuple[Any, ...]]]:
    """Every table of a SQLite file (a path) or a server (a URL), row for row."""
    if isinstance(store, Path):
        with closing(sqlite3.connect(store)) as conn:
            return {name: conn.execute(sql).fetchall() for name, sql in _TABLES.items()}
    import psycopg

    with psycopg.connect(store) as server:
        return {name: server.execute(sql).fetchall() for name, sql in _TABLES.items()}


@contextmanager
def held_table(url: str, table: str) -> Iterator[None]:
    """``table`` locked against writes (reads pass) until the block ends: an import writes
    its run's rows up to its first write of ``table``, then waits there, in its transaction."""
    import psycopg

    with psycopg.connect(url) as gate:
        gate.execute(f"LOCK TABLE {table} IN EXCLUSIVE MODE")
        yield
        gate.commit()


def wait_for_waiters(
    url: str, importers: Sequence[subprocess.Popen[str]], *, timeout: float = 240
) -> list[int]:
    """The server pids of the sessions waiting for a lock, once every importer's waits (for
    a held table, or for the run another importer of it holds); fails if one ends first."""
    import psycopg

    deadline = time.monotonic() + timeout
    with psycopg.connect(url, autocommit=True) as watcher:
        while True:
            ended = [p.args for p in importers if p.poll() is not None]
            assert not ended, f"an importer ended before it waited: {ended}"
            waiting = [
                pid
                for (pid,) in watcher.execute(
                    "SELECT pid FROM pg_stat_activity "
                    "WHERE datname = current_database() AND wait_event_type = 'Lock'"
                )
            ]
            if len(waiting) == len(importers):
                return waiting
            assert time.monotonic() < deadline, f"{len(waiting)} of {len(importers)} wait"
            time.sleep(0.05)  # polling a condition the server reports, not a guess at a time
