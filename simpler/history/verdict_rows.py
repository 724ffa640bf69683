"""A run's verdicts (one row per test: its final outcome) from the run's attempts.

The final attempt is the one of the latest phase (``phase_rank``; a phase this simpler does
not know ranks first), then the latest record time, then the highest attempt number; the
verdict takes its outcome and cause, counts the test's attempts and is quarantined when any
attempt was. Computed here rather than by an ``INSERT ... SELECT`` over the stored attempts:
a new run's attempts are in hand already, and one computation serves both a new run and a
run completed by a later import (whose attempts are read back), so both give the same rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from simpler.contract import phase_rank

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
    # nodeid -> [the attempt (phase, ts, number), outcome, cause, count, quarantined]; most
    # tests have one attempt, so an attempt is ranked only when a second one meets it.
    final: dict[str, list[Any]] = {}
    for nodeid, phase, attempt, outcome, ts, cause, quarantined in attempts:
        held = final.get(nodeid)
        if held is None:
            final[nodeid] = [(phase, ts, attempt), outcome, cause, 1, quarantined]
            continue
        held[3] += 1
        held[4] = held[4] or quarantined
        if _rank((phase, ts, attempt)) > _rank(held[0]):
            held[0], held[1], held[2] = (phase, ts, attempt), outcome, cause
    return [
        (run_id, nodeid, outcome, count, cause, 1 if quarantined else 0)
        for nodeid, (_, outcome, cause, count, quarantined) in final.items()
    ]


def _rank(attempt: tuple[str, float | None, int]) -> tuple[int, float, int]:
    phase, ts, number = attempt
    return phase_rank(phase), ts or 0.0, number
