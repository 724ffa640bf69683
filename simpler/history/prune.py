"""``simpler history prune --before DATE``: forget the runs that started before a date.

Whole runs (attempts, verdicts, phases, a shadow run's selection: ``delete_runs``) go in one
transaction: a killed prune removes nothing. A run with no start time is judged by when it
was imported. The WAL is then truncated; ``VACUUM`` (``--vacuum``) is the caller's choice,
as it rewrites the whole file (docs/history.md, "Reading it").
"""

from __future__ import annotations

from dataclasses import dataclass

from simpler.base.compat import UTC, iso_moment
from simpler.history.run_rows import delete_runs
from simpler.history.store.connection import Connection, transaction
from simpler.history.suites import drop_unused_suites

__all__ = ["PruneResult", "parse_before", "prune_before"]

_DOOMED = "SELECT run_id FROM runs WHERE coalesce(started, imported) < ?"


@dataclass(frozen=True)
class PruneResult:
    runs_removed: int
    attempts_removed: int


def parse_before(text: str) -> float:
    """``--before``'s date as unix seconds: an ISO date (midnight) or date-time, UTC unless it
    names its offset. Raises ValueError with a one-line message."""
    try:
        moment = iso_moment(text)
    except ValueError:
        raise ValueError(
            f"not a date: {text!r} (expected an ISO date or date-time in UTC, "
            "e.g. 2025-01-31 or 2025-01-31T12:00)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def prune_before(conn: Connection, before: float, *, vacuum: bool = False) -> PruneResult:
    """Delete the runs that started before ``before`` (unix seconds) and all their rows."""
    with transaction(conn):
        attempts = conn.execute(
            f"SELECT count(*) FROM attempts WHERE run_id IN ({_DOOMED})", (before,)
        ).fetchone()[0]
        runs = delete_runs(conn, _DOOMED, (before,))
        drop_unused_suites(conn)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if vacuum:
        conn.execute("VACUUM")
    return PruneResult(runs_removed=runs, attempts_removed=attempts)
