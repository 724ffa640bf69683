"""``simpler history flaky`` over a long history: 200 runs x 5,000 tests (1M attempts).

Two figures for ``nox -s bench`` (issue 24):

- ``compute_scores`` against the same core SQL typed by hand (``SCORES_SQL`` executed through
  the ``sqlite3`` module and fetched, nothing else): what simpler adds around the query
  (flips, same-commit flips, last failures, device sensitivity, the sort) must stay within
  3x of the query itself;
- the command a person types, ``simpler history flaky --db F`` (a process of its own: start,
  scores, the table printed), against one second, the absolute goal.

The database is filled by :func:`fill_bench_db` with direct inserts (no report files), so
the figure measures the scores, not an import; :func:`flaky_figures` takes another filler
(for instance one that imports report files) through ``fill``.

``python scripts/bench_history_flaky.py [REPEATS]`` prints the figures.
"""

from __future__ import annotations

import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import Figure, _command_seconds

from simpler.history.schema import connect
from simpler.history.scores import SCORES_SQL, compute_scores
from simpler.history.suites import record_suite, suite_of
from simpler.history.window import select_window

__all__ = ["BENCH_RUNS", "BENCH_TESTS", "command_figure", "fill_bench_db", "flaky_figures"]

BENCH_RUNS = 200
BENCH_TESTS = 5_000
FAILURE_RATE = 0.01  # of first attempts
RETRY_PASSES = 0.7  # a failed test passes on its retry this often
CAUSE_WEIGHTS = (("test", 0.8), ("device", 0.15), ("infra", 0.05))
RUNNERS = 4
DEVICES = 8
BROKEN_TESTS = 5  # fail every run, by their own fault
START = 1_735_689_600.0  # 2025-01-01
RATIO_GOAL = 3.0
SECONDS_GOAL = 1.0


def fill_bench_db(conn: sqlite3.Connection) -> int:
    """200 runs of 5,000 tests, 1% of them failing with a retry, as the importer stores them:
    a verdict per (run, test), an attempt per test record. Returns the attempts written.

    Two runs per commit (a push and a re-run) so that same-commit flips occur; four runner
    labels of eight cards; a few broken tests; every failure attributed as ``CAUSE_WEIGHTS``.
    """
    rng = random.Random(24)
    # In node id order, so each run's rows append to the primary key's b-tree.
    nodeids = sorted(
        f"tests/st/ops/test_op_{i // 20:03d}.py::TestOp::test_case[{i % 20}]"
        for i in range(BENCH_TESTS)
    )
    broken = set(nodeids[:: BENCH_TESTS // BROKEN_TESTS][:BROKEN_TESTS])
    causes, weights = zip(*CAUSE_WEIGHTS, strict=True)
    runs, attempts, verdicts = [], [], []
    for index in range(BENCH_RUNS):
        run_id = f"2025{index:04d}-bench"
        started = START + index * 3600.0
        runner = f"ci-a2a3-{index % RUNNERS}"
        runs.append((run_id, f"{index // 2:040x}", "main", runner, "a2a3", started, started + 1800))
        for nodeid in nodeids:
            device = rng.randrange(DEVICES)
            seconds = round(rng.uniform(0.05, 2.0), 3)
            if nodeid not in broken and rng.random() >= FAILURE_RATE:
                attempts.append((run_id, nodeid, 1, "l2", "passed", seconds, device, None, None))
                verdicts.append((run_id, nodeid, "passed", 1, None))
                continue
            cause = "test" if nodeid in broken else rng.choices(causes, weights)[0]
            message = f"AssertionError: mismatch at index {rng.randrange(64)}"
            attempts.append((run_id, nodeid, 1, "l2", "failed", seconds, device, cause, message))
            retry_device = rng.randrange(DEVICES)
            if nodeid not in broken and rng.random() < RETRY_PASSES:
                final = "flaky" if cause == "test" else "recovered"
                attempts.append(
                    (run_id, nodeid, 2, "retry", final, seconds, retry_device, None, "")
                )
                verdicts.append((run_id, nodeid, final, 2, None))
            else:
                attempts.append(
                    (run_id, nodeid, 2, "retry", "failed", seconds, retry_device, cause, message)
                )
                verdicts.append((run_id, nodeid, "failed", 2, cause))
    conn.execute("BEGIN")
    conn.executemany(
        'INSERT INTO runs (run_id, "commit", branch, runner, platform, started, ended, complete) '
        "VALUES (?, ?, ?, ?, ?, ?, ?, 1)",
        runs,
    )
    conn.executemany(
        "INSERT INTO attempts (run_id, nodeid, attempt, phase, outcome, duration_s, device, "
        "cause, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        attempts,
    )
    conn.executemany(
        "INSERT INTO verdicts (run_id, nodeid, outcome, attempts, cause) VALUES (?, ?, ?, ?, ?)",
        verdicts,
    )
    suite = suite_of(nodeids)
    for run in runs:
        record_suite(conn, run[0], suite)  # every run had every test
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return len(attempts)


def _seconds(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def flaky_figures(
    repeats: int, fill: Callable[[sqlite3.Connection], int] = fill_bench_db
) -> list[Figure]:
    with tempfile.TemporaryDirectory(prefix="simpler-bench-flaky-") as folder:
        path = Path(folder) / "history.db"
        conn = connect(path)
        try:
            attempts = fill(conn)
        finally:
            conn.close()
        conn = connect(path, create=False)  # as `simpler history flaky` opens it
        try:
            params = {**select_window().params(), "min_runs": 1}

            def by_hand() -> object:
                return conn.execute(SCORES_SQL, params).fetchall()

            def scores() -> object:
                return compute_scores(conn)

            by_hand(), scores()  # the page cache, as any second look finds it
            hand_times, scores_times = [], []
            for _ in range(repeats):  # interleaved, so a busy neighbour favours neither side
                hand_times.append(_seconds(by_hand))
                scores_times.append(_seconds(scores))
            tests = len(compute_scores(conn))
        finally:
            conn.close()
        command = command_figure(str(path), attempts, repeats, "")
    hand_s, scores_s = statistics.median(hand_times), statistics.median(scores_times)
    detail = (
        f"compute_scores {scores_s:.3f}s, SCORES_SQL by hand {hand_s:.3f}s "
        f"(medians of {repeats}; {attempts:,} attempts, {tests:,} tests)"
    )
    return [
        Figure(
            f"history flaky: scores of {attempts / 1e6:.1f}M attempts",
            scores_s / hand_s,
            "the same SQL typed by hand (sqlite3 module, fetchall)",
            detail,
            RATIO_GOAL,
        ),
        command,
    ]


def command_figure(store: str, attempts: int, repeats: int, where: str) -> Figure:
    """`simpler history flaky --db STORE`, a process each, against one second; ``where`` names
    the store in the figure (" on a server")."""
    command = [sys.executable, "-m", "simpler", "history", "flaky", "--db", store]
    _command_seconds(command)  # the caches and .pyc files, as any second run finds them
    command_s = statistics.median(_command_seconds(command) for _ in range(repeats))
    shown = "`simpler history flaky" + (" --db URL`" if where else "`")
    return Figure(
        f"history flaky command{where}: {attempts / 1e6:.1f}M attempts in {SECONDS_GOAL:g} s",
        command_s / SECONDS_GOAL,
        f"{SECONDS_GOAL:g} second",
        f"{shown} {command_s:.3f}s (median of {repeats}, a process each)",
        1.0,
    )


if __name__ == "__main__":
    for figure in flaky_figures(int(sys.argv[1]) if len(sys.argv) > 1 else 5):
        print(figure)
