"""How often the selection would have missed a failure: the shadow runs' decisions
(``affected_runs``, ``affected_selected``, kept by ``shadow_rows.py``) against their verdicts.

Over the newest shadow runs of the window: a failure is a final verdict that is neither green
nor quarantined; a decision that selected every test misses nothing (docs/affected.md,
Shadow mode).
"""

from __future__ import annotations

from simpler.contract import GREEN_OUTCOMES
from simpler.history.model import ShadowMisses
from simpler.history.outcome_sql import sql_list
from simpler.history.store.connection import Connection
from simpler.history.window import EVERY_RUN, WINDOW_CTE, Window

__all__ = ["LAST_SHADOW_RUNS", "NEWEST_MISSES", "shadow_misses"]

LAST_SHADOW_RUNS = 50  # the newest shadow runs of the window the figure is over
NEWEST_MISSES = 20  # misses named, newest run first: the rest are in the counts

# One row per failure of each shadow run, and one row of no node id for a run that had none
# (it still counts as a run). A run without a start time sorts oldest on both stores.
_SQL = f"""WITH {WINDOW_CTE},
shadow AS (
    SELECT s.run_id, s.run_all, coalesce(r.started, 0) AS started
    FROM affected_runs AS s
    JOIN runs AS r ON r.run_id = s.run_id
    WHERE s.run_id IN win
    ORDER BY coalesce(r.started, 0) DESC, s.run_id DESC
    LIMIT :shadow_runs
)
SELECT sh.run_id, sh.run_all, v.nodeid, sel.nodeid
FROM shadow AS sh
LEFT JOIN verdicts AS v
    ON v.run_id = sh.run_id AND v.quarantined = 0 AND v.outcome NOT IN {sql_list(GREEN_OUTCOMES)}
LEFT JOIN affected_selected AS sel ON sel.run_id = v.run_id AND sel.nodeid = v.nodeid
ORDER BY sh.started DESC, sh.run_id DESC, v.nodeid"""


def shadow_misses(
    conn: Connection,
    *,
    window: Window = EVERY_RUN,
    last: int = LAST_SHADOW_RUNS,
    named: int = NEWEST_MISSES,
) -> ShadowMisses:
    """The misses over the newest ``last`` shadow runs of ``window``, the newest ``named`` of
    them by run and test."""
    if last < 1:
        raise ValueError(f"the miss rate is over at least 1 shadow run, got {last!r}")
    runs: set[str] = set()
    with_misses: set[str] = set()
    failures = missed = 0
    newest: list[tuple[str, str]] = []
    rows = conn.execute(_SQL, {**window.params(), "shadow_runs": last})
    for run_id, run_all, nodeid, selected in rows:
        runs.add(run_id)
        if nodeid is None:
            continue
        failures += 1
        if run_all is not None or selected is not None:
            continue
        missed += 1
        with_misses.add(run_id)
        if len(newest) < named:
            newest.append((run_id, nodeid))
    return ShadowMisses(len(runs), failures, missed, len(with_misses), tuple(newest))
