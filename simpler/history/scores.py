"""Flake scores: per test, over a window of runs, how often it failed by its own fault.

``simpler history flaky`` prints these; the quarantine's suggestions and the page read them.
The definitions below are the contract a team reads the table by. Every count is over the
runs of the window (``simpler.history.window``) in which the test has a verdict, and a
failure's cause is the one the importer attributed to the failed attempt (docs/design.md):

- ``runs``: those runs.
- ``passed``: runs whose final verdict is green and says the test ran: passed, recovered,
  flaky, xfailed, xpassed. A skipped run is neither a pass nor a failure.
- ``failed_test``: runs with at least one failed attempt whose cause is ``test``, whatever
  the final verdict: a flaky run (failed, then passed on retry) counts here and in passed.
- ``failed_device``: runs with a device-attributed failed attempt and no test-caused one.
- ``failed_infra``: runs with an infra-attributed failed attempt and neither of the others
  (every failure of an incomplete run is infra).
- ``pass_on_retry``: runs whose verdict is ``flaky``: a failure of its own, then a pass.
- ``same_commit_flips``: commits on which the test had both a run with a failure of its own
  and a run that passed without one. A single run that failed and passed on retry is a
  ``pass_on_retry``, not a flip across runs.
- ``flip_rate``: changes between consecutive runs (by start time) of "failed by its own
  fault" vs not, over ``runs - 1``; 0 below two runs. Device, infra and skipped runs count
  as not failed. A test broken once and then fixed flips once; a flaky one flips often.
- ``flake_rate``: ``failed_test`` over the runs that say something about the test: those in
  which it passed or failed by its own fault. Skipped runs, and runs it failed only by a
  device or infra fault, are left out of both sides, so a storm of device faults neither
  dilutes nor inflates a test's rate. ``flake_rate_low``/``_high``: the Wilson 95% interval
  (``simpler.history.flake_stats``); [0, 1] when no run says anything.
- ``state``: ``stable`` when it has no failure of its own (failures attributed only to
  devices and infrastructure leave a test stable); ``broken`` when it failed by its own
  fault and never passed in the window; ``device-sensitive`` when all its own failures (at
  least 2 failing runs) fell on one card (runner label + device id) or on one runner label,
  while it also ran elsewhere, and that many failures would land on one place by luck less
  than 5% of the time (``flake_stats.concentrated_place``); ``flaky`` otherwise.
- ``last_failure``: the latest run with a failure of its own: its run id, commit, and the
  message of its last failed attempt of that cause.
- ``devices``: the cards (``RUNNER/devN``) its own failures fell on.

Tests with fewer than ``min_runs`` runs are left out. The list is sorted by flake rate,
then the interval's upper bound (the less evidence, the higher), both descending, then
node id.

The heavy part is SQL and never reads the million verdict rows of a long history: the runs
per test come from the suites the window's runs had (:data:`PRESENCE_SQL`,
``simpler.history.suites``), and every other count from the ~1% of (run, test) pairs that are
not a plain pass (``simpler.history.unusual_runs``), which also hold what flips, same-commit
flips, the last failure and where failures fell need (``simpler.history.failure_evidence``,
for the tests that failed by their own fault only). :data:`SCORES_SQL` is the whole table as
one statement, the query a person would type into ``sqlite3``: the benchmark's baseline, and
a unit test holds it to the same numbers.
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
