"""What each test took lately, as the history measured it: the share of a suite's time a
selection runs (``37 of 4,210 tests selected, 5% of the measured test time``), which on a
device suite is the share of the device time it takes."""

from __future__ import annotations

from simpler.contract import PASSING_OUTCOMES
from simpler.history.outcome_sql import sql_list
from simpler.history.store import Connection

__all__ = ["measured_seconds"]

# Each test's passing attempts in the newest runs: a failed attempt stopped at an arbitrary
# point and says nothing of what the test takes.
_MEAN_SECONDS = f"""
SELECT a.nodeid, avg(a.duration_s) FROM attempts a
JOIN (SELECT run_id FROM runs WHERE started IS NOT NULL ORDER BY started DESC LIMIT ?) r
  ON r.run_id = a.run_id
WHERE a.duration_s IS NOT NULL AND a.outcome IN {sql_list(PASSING_OUTCOMES)}
GROUP BY a.nodeid
"""


def measured_seconds(conn: Connection, last_runs: int) -> dict[str, float]:
    """Each test's mean seconds over its passing attempts in the last ``last_runs`` runs."""
    rows = conn.execute(_MEAN_SECONDS, (last_runs,)).fetchall()
    return {str(nodeid): float(seconds) for nodeid, seconds in rows if seconds is not None}
