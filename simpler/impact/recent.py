"""The tests the history says were in trouble lately: a selection runs a test that failed or
was flaky in any of the last N runs, whatever changed (a fix is not proven by the tests it
touched alone, and a flaky test's next failure is the one a team is waiting for)."""

from __future__ import annotations

from collections import Counter

from simpler.contract import GREEN_OUTCOMES
from simpler.history.store import Connection

__all__ = ["recent_trouble"]

_LAST_VERDICTS = """
SELECT v.nodeid, v.outcome FROM verdicts v
JOIN (SELECT run_id FROM runs WHERE started IS NOT NULL ORDER BY started DESC LIMIT ?) r
  ON r.run_id = v.run_id
"""


def recent_trouble(conn: Connection, last_runs: int) -> dict[str, list[str]]:
    """Per test in trouble: ``failed in 2 of the last 20 runs``, ``flaky in 1 of ...``."""
    failed: Counter[str] = Counter()
    flaky: Counter[str] = Counter()
    for nodeid, outcome in conn.execute(_LAST_VERDICTS, (last_runs,)).fetchall():
        if outcome == "flaky":
            flaky[nodeid] += 1
        elif outcome not in GREEN_OUTCOMES:
            failed[nodeid] += 1
    trouble: dict[str, list[str]] = {}
    for counts, word in ((failed, "failed"), (flaky, "flaky")):
        for nodeid, times in counts.items():
            trouble.setdefault(nodeid, []).append(f"{word} in {times} of the last {last_runs} runs")
    return trouble
