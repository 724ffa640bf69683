"""The runs of each test that were something other than a plain pass, read in one query.

About 1% of a history's (run, test) pairs: a failure of any cause, a retry, a skip, an
expected failure (``outcome_sql.UNUSUAL_VERDICT``). Every count of the scores but the
number of runs, and everything the scores need to know about a test's failures (which runs,
which cards, which messages), is in these rows, so they are read once and counted here
instead of the verdicts being read again by a second query.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from simpler.history.model import CAUSES
from simpler.history.outcome_sql import RAN_GREEN, UNUSUAL_VERDICT
from simpler.history.store.connection import Connection
from simpler.history.window import WINDOW_CTE, Window

__all__ = ["UNUSUAL_SQL", "OwnAttempt", "Tally", "UnusualRun", "UnusualRuns", "read_unusual"]

# One row per unusual verdict and failed attempt of it (one with NULLs when none failed).
UNUSUAL_SQL = f"""WITH {WINDOW_CTE}
SELECT v.run_id, v.nodeid, v.outcome, a.cause, a.phase, a.attempt, a.device, a.message
FROM verdicts AS v
LEFT JOIN attempts AS a
    ON a.run_id = v.run_id AND a.nodeid = v.nodeid AND a.cause IS NOT NULL
WHERE v.run_id IN win AND {UNUSUAL_VERDICT}"""


@dataclass(frozen=True)
class OwnAttempt:
    """A failed attempt whose cause is the test's own."""

    phase: str
    attempt: int
    device: int | None
    message: str


@dataclass
class UnusualRun:
    """One test in one run: its verdict, the causes of its failed attempts, its own ones."""

    outcome: str
    causes: set[str] = field(default_factory=set)
    own: list[OwnAttempt] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.outcome in RAN_GREEN

    @property
    def cause(self) -> str | None:
        """The cause the run counts under: its own failure first, then the device's."""
        for cause in CAUSES:  # in that order
            if cause in self.causes:
                return cause
        return None


@dataclass(frozen=True)
class Tally:
    """What a test's unusual runs add up to (the counts of ``simpler.history.scores``)."""

    runs: int = 0
    passed: int = 0
    judged: int = 0  # runs that say something about the test: passed, or failed by itself
    failed_test: int = 0
    failed_device: int = 0
    failed_infra: int = 0
    pass_on_retry: int = 0


@dataclass
class UnusualRuns:
    """One test's unusual runs, by the run's position in the window (oldest first)."""

    runs: dict[int, UnusualRun] = field(default_factory=dict)

    def tally(self) -> Tally:
        counts = dict.fromkeys(("passed", "judged", "flaky", *CAUSES), 0)
        for run in self.runs.values():
            cause = run.cause
            if cause is not None:
                counts[cause] += 1
            if run.passed:
                counts["passed"] += 1
            if run.passed or cause == "test":
                counts["judged"] += 1
            if run.outcome == "flaky":
                counts["flaky"] += 1
        return Tally(
            runs=len(self.runs),
            passed=counts["passed"],
            judged=counts["judged"],
            failed_test=counts["test"],
            failed_device=counts["device"],
            failed_infra=counts["infra"],
            pass_on_retry=counts["flaky"],
        )

    @property
    def own_failures(self) -> dict[int, UnusualRun]:
        return {index: run for index, run in self.runs.items() if "test" in run.causes}


def read_unusual(
    conn: Connection, window: Window, position: Mapping[str, int]
) -> dict[str, UnusualRuns]:
    """Every test's unusual runs in ``window``; ``position`` maps its run ids to their places."""
    found: dict[str, UnusualRuns] = {}
    for run_id, nodeid, outcome, cause, phase, attempt, device, message in conn.execute(
        UNUSUAL_SQL, window.params()
    ):
        runs = found.setdefault(nodeid, UnusualRuns()).runs
        index = position[run_id]
        run = runs.get(index)
        if run is None:
            run = runs[index] = UnusualRun(outcome)
        if cause is not None:
            run.causes.add(cause)
            if cause == "test":
                run.own.append(OwnAttempt(phase, attempt, device, message or ""))
    return found
