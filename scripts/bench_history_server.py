"""The history on a PostgreSQL server (issue 34): its import, its importers at once, its scores.

Three figures for ``nox -s bench``, each against a baseline measured in the same run, on a
server the benchmark starts (as the tests do: tests/postgres_server.py):

- the import of 200 runs x 5,000 tests (the report files of ``bench_history_import``) into
  the server, against the same import into a SQLite file: at most 1.5x (a new run's rows are
  loaded with COPY, not a statement per row);
- 8 ``simpler history import`` processes at once, each with runs of its own, against one:
  their runs per second at least 3x one importer's (written as one importer's time per run
  over the eight's, at most 1/3), judged on a machine of 8 cores or more: on fewer, one
  importer (its readers, its writer and the server) keeps most of them busy already. Beside
  it, what the same measures on any machine: the 8 into one database against the 8 at once
  into databases of their own on the same server, at most 1.2x;
- ``simpler history flaky`` over 1M attempts (``bench_history_flaky``'s database, copied
  onto the server), a process each: at most one second.

Without a server binary (initdb, pg_ctl) the section says so and measures nothing.
``python scripts/bench_history_server.py [REPEATS]`` prints the figures.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "tests"))

from bench import ROOT, Figure, _command_seconds
from bench_history_import import RUNS, TESTS, write_bench_reports
from postgres_server import PostgresServer, find_server_bin, start_server

__all__ = ["server_figures"]

IMPORT_GOAL = 1.5  # the server's import of the bench runs against the file's
IMPORTERS = 8
RUNS_PER_IMPORTER = 10
TESTS_PER_RUN = 2_000  # the importers' runs: smaller, so 8 x 10 of them stay quick
SPEED_UP_GOAL = 3.0  # 8 importers' runs per second against one's, on 8 cores or more
SHARED_GOAL = 1.2  # 8 importers into one database against 8 into databases of their own


def server_figures(repeats: int) -> list[Figure]:
    folder = find_server_bin()
    if folder is None:
        print("history server: no PostgreSQL server binary (initdb, pg_ctl): not measured")
        return []
    server = start_server(folder)
    try:
        with tempfile.TemporaryDirectory(prefix="simpler-bench-server-") as work:
            return [
                _import_figure(server, Path(work), repeats),
                *_importers_figure(server, Path(work), repeats),
                _flaky_figure(server, Path(work), repeats),
            ]
    finally:
        server.stop()


def _fresh(server: PostgresServer) -> Callable[[], str]:
    """A new empty database each call, the one before dropped (the disk holds one)."""
    made: list[str] = []

    def fresh() -> str:
        _drop(server, made)
        made[:] = [server.create_database(f"bench_{time.time_ns()}")]
        return made[0]

    return fresh


def _import_seconds(store: str, reports: list[Path]) -> float:
    """One ``simpler history import`` of every report, as a backfill types it."""
    argv = [sys.executable, "-m", "simpler", "history", "import", *map(str, reports)]
    return _command_seconds([*argv, "--db", store, "--branch", "main", "--runner", "ci"])


def _import_figure(server: PostgresServer, work: Path, repeats: int) -> Figure:
    reports = write_bench_reports(work / "import")
    fresh = _fresh(server)
    server_times, file_times = [], []
    for attempt in range(min(repeats, 3)):  # each reads 0.5 GB of reports
        db = work / f"history-{attempt}.db"
        file_times.append(_import_seconds(str(db), reports))
        for written in work.glob(f"history-{attempt}.db*"):
            written.unlink()
        server_times.append(_import_seconds(fresh(), reports))
    server_s, file_s = statistics.median(server_times), statistics.median(file_times)
    for report in reports:
        report.unlink()
    return Figure(
        f"history import into a server: {RUNS} runs x {TESTS:,} tests",
        server_s / file_s,
        "the same `simpler history import` into a SQLite file",
        f"{server_s:.2f}s vs {file_s:.2f}s (medians of {len(server_times)})",
        IMPORT_GOAL,
    )


def _importers_figure(server: PostgresServer, work: Path, repeats: int) -> list[Figure]:
    """The issue's figure, and the one that measures the same where the machine has fewer
    cores than importers: what one database shared by the eight costs against eight
    databases of their own on the same server (no table, index or lock in common), also at
    once. A store that made importers wait for each other shows in both."""
    every = write_bench_reports(
        work / "importers", runs=IMPORTERS * RUNS_PER_IMPORTER, tests=TESTS_PER_RUN
    )
    shares = [every[n::IMPORTERS] for n in range(IMPORTERS)]  # each importer its own runs
    fresh = _fresh(server)
    one_times, shared_times, apart_times, busy = [], [], [], []
    for _ in range(min(repeats, 3)):
        before = psutil.cpu_times()
        one_times.append(_import_seconds(fresh(), shares[0]))
        busy.append(_busy_cores(before, psutil.cpu_times(), one_times[-1]))
        shared_times.append(_at_once([fresh()] * IMPORTERS, shares))
        apart = [server.create_database(f"apart_{time.time_ns()}_{n}") for n in range(IMPORTERS)]
        apart_times.append(_at_once(apart, shares))
        _drop(server, apart)
    one_s, shared_s = statistics.median(one_times), statistics.median(shared_times)
    apart_s = statistics.median(apart_times)
    speed_up = IMPORTERS * one_s / shared_s
    cores = os.cpu_count() or 1
    judged = cores >= IMPORTERS  # fewer cores than importers cap any store's speed-up
    return [
        Figure(
            f"history server: {IMPORTERS} importers at once, {RUNS_PER_IMPORTER} runs each",
            1 / speed_up,
            f"one importer's time per run ({speed_up:.2f}x its runs per second)",
            f"{IMPORTERS} x {RUNS_PER_IMPORTER} runs in {shared_s:.2f}s, one importer's "
            f"{RUNS_PER_IMPORTER} in {one_s:.2f}s (medians of {len(one_times)}; "
            f"{TESTS_PER_RUN:,} tests a run); one importer kept "
            f"{statistics.median(busy):.1f} of {cores} cores busy"
            + ("" if judged else f": not judged on {cores} cores"),
            1 / SPEED_UP_GOAL if judged else None,
        ),
        Figure(
            f"history server: {IMPORTERS} importers at once into one database",
            shared_s / apart_s,
            f"the same {IMPORTERS} at once, each into a database of its own",
            f"{shared_s:.2f}s vs {apart_s:.2f}s (medians of {len(shared_times)})",
            SHARED_GOAL,
        ),
    ]


def _busy_cores(before: Any, after: Any, seconds: float) -> float:
    """How many cores the machine kept busy over ``seconds`` (the importer, its readers and
    the server alike)."""
    busy = sum(after) - after.idle - (sum(before) - before.idle)
    return busy / seconds


def _drop(server: PostgresServer, urls: list[str]) -> None:
    """Drop the databases these URLs name."""
    import psycopg

    with psycopg.connect(server.url(), autocommit=True) as admin:
        for url in urls:
            admin.execute(f'DROP DATABASE IF EXISTS "{url.rpartition("/")[2]}"')


def _at_once(urls: list[str], shares: list[list[Path]]) -> float:
    """Each share imported by a process of its own into its URL, all started together."""
    started = time.perf_counter()
    argv = [sys.executable, "-m", "simpler", "history", "import", "--db"]
    importers = [
        subprocess.Popen(
            [*argv, url, *map(str, share)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for url, share in zip(urls, shares, strict=True)
    ]
    for importer in importers:
        _, stderr = importer.communicate()
        if importer.returncode != 0:
            raise RuntimeError(f"an importer exited {importer.returncode}: {stderr.strip()}")
    return time.perf_counter() - started


def _flaky_figure(server: PostgresServer, work: Path, repeats: int) -> Figure:
    from bench_history_flaky import command_figure, fill_bench_db

    from simpler.history.copy import copy_history
    from simpler.history.store import open_store

    db = work / "flaky.db"
    conn = open_store(str(db))
    attempts = fill_bench_db(conn)
    conn.close()
    url = server.create_database("flaky")
    source, target = open_store(str(db), create=False), open_store(url)
    try:
        copy_history(source, target)
        target.execute("ANALYZE")  # what autovacuum does after a load this size
    finally:
        source.close()
        target.close()
    return command_figure(url, attempts, repeats, " on a server")


if __name__ == "__main__":
    for figure in server_figures(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        print(figure)
