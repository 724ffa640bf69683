"""A run already stored meets another source of it: which of the source's attempts the
verdict rule (``simpler.reporting.verdicts.supersedes``) lets replace the stored ones, and
the upsert that writes them.

The rule is weighed here, in Python, rather than restated in the upsert's SQL: the importer
reads the run's stored attempts under the run's lock (``Connection.lock_run``), so no other
import of the run writes between this read and the upsert.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

from simpler.history.parsed_run import SHAPES
from simpler.history.store.connection import Connection
from simpler.reporting.verdicts import RecordStanding, supersedes

__all__ = ["UPSERT_ATTEMPT", "winning_attempts"]

Row = tuple[Any, ...]
# Only rows the rule let through reach it: each replaces the one its key holds.
_ON_CONFLICT = """
ON CONFLICT (run_id, nodeid, phase, attempt) DO UPDATE SET
    outcome = excluded.outcome, duration_s = excluded.duration_s, device = excluded.device,
    runtime = excluded.runtime, rc = excluded.rc, "where" = excluded."where",
    cause = excluded.cause, own_cause = excluded.own_cause,
    quarantined = excluded.quarantined, message = excluded.message,
    label = COALESCE(excluded.label, attempts.label), ts = excluded.ts
"""
UPSERT_ATTEMPT = {
    shape: "INSERT INTO attempts ({}) VALUES ({}) {}".format(
        ", ".join(f'"{column}"' for column in columns), ", ".join("?" * len(columns)), _ON_CONFLICT
    )
    for shape, columns in SHAPES.items()
}
# What the rule weighs of an attempt: in the table, and where a row of each shape holds it.
_STANDING = ("nodeid", "phase", "attempt", "outcome", "ts")
_STORED = "SELECT {} FROM attempts WHERE run_id = ?".format(", ".join(_STANDING))
_STANDING_OF_ROW = {
    shape: itemgetter(*(columns.index(name) for name in _STANDING))
    for shape, columns in SHAPES.items()
}


def winning_attempts(
    conn: Connection, run_id: str, shaped: dict[str, list[Row]]
) -> dict[str, list[Row]]:
    """The source's rows (by shape) new to the stored run, or preferred by the rule to the
    attempt stored under their key."""
    stored = {
        (nodeid, phase, attempt): RecordStanding(phase, ts, attempt, outcome)
        for nodeid, phase, attempt, outcome, ts in conn.execute(_STORED, (run_id,))
    }
    winners: dict[str, list[Row]] = {}
    for shape, rows in shaped.items():
        standing_of_row = _STANDING_OF_ROW[shape]
        kept = winners[shape] = []
        for row in rows:
            nodeid, phase, attempt, outcome, ts = standing_of_row(row)
            held = stored.get((nodeid, phase, attempt))
            if held is None or supersedes(RecordStanding(phase, ts, attempt, outcome), held):
                kept.append(row)
    return winners
