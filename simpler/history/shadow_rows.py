"""A shadow run's selection in the history (``affected_runs``, ``affected_selected``).

The importer keeps the decision of ``simpler run --affected-since REV --affected-shadow``
here, in the run's own transaction; ``shadow_misses.py`` counts the misses from it.
Idempotent and order-free: the run's row is upserted (the later import's decision wins) and
its selected tests are a union, so shards and a repeated import leave the same rows.
"""

from __future__ import annotations

from simpler.history.store.connection import Connection
from simpler.reporting.affected_block import AffectedDecision

__all__ = ["keep_shadow_decision"]

_UPSERT_DECISION = """
INSERT INTO affected_runs (run_id, since, map_commit, run_all, selected, tests)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (run_id) DO UPDATE SET
    since = excluded.since, map_commit = excluded.map_commit, run_all = excluded.run_all,
    selected = excluded.selected, tests = excluded.tests
"""
_ADD_SELECTED = (
    "INSERT INTO affected_selected (run_id, nodeid) VALUES (?, ?) ON CONFLICT DO NOTHING"
)


def keep_shadow_decision(conn: Connection, run_id: str, decision: AffectedDecision) -> None:
    """Store ``decision`` as ``run_id``'s; call it within the run's import transaction."""
    conn.execute(
        _UPSERT_DECISION,
        (run_id, decision.since, decision.map_commit, decision.run_all,
         len(decision.selected), decision.of),
    )  # fmt: skip
    # Sorted: the rows land in key order, and two imports of one run add them alike.
    conn.executemany(_ADD_SELECTED, [(run_id, nodeid) for nodeid in sorted(decision.selected)])
