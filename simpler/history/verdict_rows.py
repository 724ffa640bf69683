"""A run's verdicts (one row per test: its final outcome) from the run's attempts.

The final attempt is the one the verdict rule picks (``simpler.reporting.verdicts``); one
computation for a new run and for a run a later import completed, so both give the same
rows (docs/history.md, "How an import stores a run").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from simpler.reporting.verdicts import RecordStanding, supersedes

__all__ = ["ATTEMPT_COLUMNS", "INSERT_VERDICT", "VERDICT_COLUMNS", "verdict_rows"]

# What verdict_rows reads of each attempt, in this order (also the read-back query's).
ATTEMPT_COLUMNS = ("nodeid", "phase", "attempt", "outcome", "ts", "cause", "quarantined")
# A verdict row's columns, in verdict_rows' order.
VERDICT_COLUMNS = ("run_id", "nodeid", "outcome", "attempts", "cause", "quarantined")
INSERT_VERDICT = "INSERT INTO verdicts ({}) VALUES ({})".format(
    ", ".join(VERDICT_COLUMNS), ", ".join("?" * len(VERDICT_COLUMNS))
)


def verdict_rows(run_id: str, attempts: Iterable[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The verdict rows of ``run_id`` from its attempts (ATTEMPT_COLUMNS), in node id order
    when the attempts come in node id order."""
    # nodeid -> [phase, ts, attempt, outcome, cause, count, quarantined] of its final attempt
    # so far; most tests have one attempt, so the rule weighs one only when a second meets it.
    final: dict[str, list[Any]] = {}
    for nodeid, phase, attempt, outcome, ts, cause, quarantined in attempts:
        held = final.get(nodeid)
        if held is None:
            final[nodeid] = [phase, ts, attempt, outcome, cause, 1, quarantined]
            continue
        held[5] += 1
        held[6] = held[6] or quarantined
        if supersedes(RecordStanding(phase, ts, attempt, outcome), RecordStanding(*held[:4])):
            held[:5] = phase, ts, attempt, outcome, cause
    return [
        (run_id, nodeid, outcome, count, cause, 1 if quarantined else 0)
        for nodeid, (_, _, _, outcome, cause, count, quarantined) in final.items()
    ]
