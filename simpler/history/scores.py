"""Flake scores: per test, over a window of runs, how often it failed by its own fault.

``simpler history flaky`` prints these; the quarantine's suggestions and the page read them.
Each column, the states and the order are defined in docs/history.md, "How the scores are
counted", with why the heavy part is SQL over suites and unusual runs. :data:`SCORES_SQL` is
the whole table as one statement: the benchmark's baseline, held by a test to the same numbers.
"""

from __future__ import annotations

from simpler.history.failure_evidence import Evidence, gather_evidence
from simpler.history.flake_stats import state_of, wilson_interval
from simpler.history.model import TestScore
from simpler.history.outcome_sql import RAN_GREEN, UNUSUAL_VERDICT, sql_list
from simpler.history.store.connection import Connection
from simpler.history.suites import PRESENCE_CTE
from simpler.history.unusual_runs import Tally, read_unusual
from simpler.history.window import EVERY_RUN, WINDOW_CTE, Window, window_runs

__all__ = ["PRESENCE_SQL", "SCORES_SQL", "compute_scores"]

_RAN = sql_list(RAN_GREEN)

# The runs of each test in the window, from the suites its runs had (simpler.history.suites):
# no index of the million verdicts by node id. Parameters: WINDOW_CTE's and :min_runs.
PRESENCE_SQL = f"""WITH {WINDOW_CTE},
{PRESENCE_CTE}
SELECT nodeid, runs FROM presence WHERE runs >= :min_runs"""

# The table in one statement (the counts of a TestScore). Parameters: as PRESENCE_SQL.
SCORES_SQL = f"""WITH {WINDOW_CTE},
{PRESENCE_CTE},
unusual AS (
    SELECT v.nodeid, v.outcome,
           coalesce(max(a.cause = 'test'), 0) AS by_test,
           coalesce(max(a.cause = 'device'), 0) AS by_device,
           coalesce(max(a.cause = 'infra'), 0) AS by_infra
    FROM verdicts AS v
    LEFT JOIN attempts AS a
        ON a.run_id = v.run_id AND a.nodeid = v.nodeid AND a.cause IS NOT NULL
    WHERE v.run_id IN win AND {UNUSUAL_VERDICT}
    GROUP BY v.run_id, v.nodeid
),
unusual_by_test AS (
    SELECT nodeid,
           count(*) AS runs,
           sum(outcome IN {_RAN}) AS passed,
           sum(outcome = 'skipped') AS skipped,
           sum(outcome IN {_RAN} OR by_test) AS judged,
           sum(by_test) AS failed_test,
           sum(NOT by_test AND by_device) AS failed_device,
           sum(NOT by_test AND NOT by_device AND by_infra) AS failed_infra,
           sum(outcome = 'flaky') AS pass_on_retry
    FROM unusual
    GROUP BY nodeid
)
SELECT p.nodeid,
       p.runs,
       p.runs - coalesce(o.runs, 0) + coalesce(o.passed, 0) AS passed,
       coalesce(o.skipped, 0) AS skipped,
       p.runs - coalesce(o.runs, 0) + coalesce(o.judged, 0) AS judged,
       coalesce(o.failed_test, 0) AS failed_test,
       coalesce(o.failed_device, 0) AS failed_device,
       coalesce(o.failed_infra, 0) AS failed_infra,
       coalesce(o.pass_on_retry, 0) AS pass_on_retry
FROM presence AS p
LEFT JOIN unusual_by_test AS o USING (nodeid)
WHERE p.runs >= :min_runs"""


def compute_scores(
    conn: Connection,
    *,
    window: Window = EVERY_RUN,
    min_runs: int = 1,
) -> list[TestScore]:
    """The scores of every test with at least ``min_runs`` runs in the window, sorted as the
    table lists them (the module's docstring defines each field)."""
    runs = window_runs(conn, window)
    presence = dict(conn.execute(PRESENCE_SQL, {**window.params(), "min_runs": min_runs}))
    unusual = read_unusual(conn, window, {run.run_id: i for i, run in enumerate(runs)})
    evidence = gather_evidence(conn, runs, presence, unusual)
    tallies = {nodeid: tests.tally() for nodeid, tests in unusual.items()}
    nothing = Tally()  # a test with no unusual run: every run a plain pass
    scores = [
        _score(nodeid, count, tallies.get(nodeid, nothing), evidence.get(nodeid))
        for nodeid, count in presence.items()
    ]
    scores.sort(key=lambda s: (-s.flake_rate, -s.flake_rate_high, s.nodeid))
    return scores


def _score(nodeid: str, runs: int, unusual: Tally, evidence: Evidence | None) -> TestScore:
    plain_passes = runs - unusual.runs  # every other run of the window: a plain pass
    passed = plain_passes + unusual.passed
    judged = plain_passes + unusual.judged
    low, high = wilson_interval(unusual.failed_test, judged)
    flips = evidence.flips if evidence else 0
    return TestScore(
        nodeid=nodeid,
        runs=runs,
        passed=passed,
        failed_test=unusual.failed_test,
        failed_device=unusual.failed_device,
        failed_infra=unusual.failed_infra,
        pass_on_retry=unusual.pass_on_retry,
        same_commit_flips=evidence.same_commit_flips if evidence else 0,
        flip_rate=flips / (runs - 1) if runs > 1 else 0.0,
        flake_rate=unusual.failed_test / judged if judged else 0.0,
        flake_rate_low=low,
        flake_rate_high=high,
        state=state_of(
            failed_test=unusual.failed_test,
            passed=passed,
            device_sensitive=evidence is not None and evidence.device_sensitive,
        ),
        last_failure=evidence.last_failure if evidence else None,
        devices=evidence.devices if evidence else (),
    )
