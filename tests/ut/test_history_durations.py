"""``simpler history durations``: the scheduler's own durations file, written from the passing
attempts of every run in the window, read back by the scheduler's own reader."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from history_rows import HOUR, T0, Try, add_run, add_test, open_db

from simpler.history.durations_export import export_durations
from simpler.history.schema import SCHEMA_VERSION, connect
from simpler.history.window import select_window
from simpler.scheduler.durations import KEPT_SAMPLES, Measured, load_durations, load_measurements

TEST = "tests/st/test_mm.py::test_large"


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    with closing(open_db(tmp_path)) as connection:
        yield connection


def runs_of(conn: sqlite3.Connection, *per_run: list[tuple[str, Try]]) -> None:
    """Run i (oldest first) holds the given (nodeid, attempt) pairs, one attempt per test."""
    for index, tests in enumerate(per_run):
        add_run(conn, f"r{index}", started=T0 + index * HOUR)
        for nodeid, attempt in tests:
            add_test(conn, f"r{index}", nodeid, attempt)


def test_the_file_reads_back_through_the_schedulers_reader(
    conn: sqlite3.Connection, tmp_path: Path
) -> None:
    seconds = [5.0, 1.0, 2.0, 3.0, 4.0, 9.0, 6.0]
    runs_of(conn, *[[(TEST, Try("passed", duration_s=s))] for s in seconds])
    out = tmp_path / "out" / "durations.json"
    assert export_durations(conn, out) == 2  # the test and its file
    measured = load_measurements(out)[TEST]
    assert measured == Measured(tuple(seconds[-KEPT_SAMPLES:]), len(seconds))
    assert load_durations(out)[TEST] == 4.0  # the median of 2, 3, 4, 9, 6
    assert json.loads(out.read_text())[TEST]["seconds"] == 4.0


def test_only_passing_attempts_give_samples_and_a_retry_its_own_time(
    conn: sqlite3.Connection, tmp_path: Path
) -> None:
    runs_of(
        conn,
        [(TEST, Try("passed", duration_s=2.0))],
        [(TEST, Try("failed", "test", duration_s=50.0))],
        [(TEST, Try("skipped", duration_s=0.0))],
    )
    add_run(conn, "retried", started=T0 + 10 * HOUR)
    add_test(
        conn,
        "retried",
        TEST,
        Try("failed", "test", duration_s=40.0),
        Try("flaky", phase="retry", duration_s=3.0),
    )
    add_run(conn, "twice", started=T0 + 11 * HOUR)
    add_test(
        conn,
        "twice",
        TEST,
        Try("passed", duration_s=9.0),
        Try("recovered", phase="retry", duration_s=4.0),
    )
    export_durations(conn, tmp_path / "d.json")
    # One sample a run: a run's last passing attempt.
    assert load_measurements(tmp_path / "d.json")[TEST] == Measured((2.0, 3.0, 4.0), 3)


def test_a_resource_label_sums_its_tests_and_a_test_file_its_l2_tests(
    conn: sqlite3.Connection, tmp_path: Path
) -> None:
    child = "tests/st/test_multi.py"
    runs_of(
        conn,
        [
            (f"{child}::test_a", Try("passed", phase="resource", duration_s=2.0, label="multi")),
            (f"{child}::test_b", Try("passed", phase="resource", duration_s=3.0, label="multi")),
            (TEST, Try("passed", duration_s=1.5, label=TEST)),  # its label is its node id
            (f"{child}::test_c", Try("passed", phase="resource", duration_s=4.0, label=TEST)),
            ("tests/st/test_mm.py::test_small", Try("failed", "test", duration_s=0.5)),
        ],
    )
    export_durations(conn, tmp_path / "d.json")
    durations = load_durations(tmp_path / "d.json")
    assert durations == {
        f"{child}::test_a": 2.0,
        f"{child}::test_b": 3.0,
        f"{child}::test_c": 4.0,
        "multi": 5.0,
        TEST: 1.5,  # a node id is no label's sum
        # What the L2 phase records for --shard: every L2 test's time, failed ones too.
        "file:tests/st/test_mm.py": 2.0,
    }


def test_the_window_picks_the_runs_and_the_file_is_replaced_whole(
    conn: sqlite3.Connection, tmp_path: Path
) -> None:
    runs_of(conn, *[[(TEST, Try("passed", duration_s=float(s)))] for s in range(1, 5)])
    out = tmp_path / "d.json"
    out.write_text(json.dumps({"stale": {"seconds": 1, "samples": [1], "count": 1}}))
    export_durations(conn, out, window=select_window(last_runs=2))
    assert load_measurements(out) == {
        TEST: Measured((3.0, 4.0), 2),
        "file:tests/st/test_mm.py": Measured((3.0, 4.0), 2),
    }
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith("history.db")] == [
        "d.json"
    ]  # no temporary file left behind
    assert export_durations(conn, out, window=select_window(branch="nope")) == 0
    assert load_measurements(out) == {} and out.read_text() == "{}\n"


def test_the_l2_phases_start_up_is_what_it_took_beyond_its_tests_spread_over_devices(
    conn: sqlite3.Connection, tmp_path: Path
) -> None:
    # Two runs: the L2 phase took 10 s and 7 s; its tests 4 s over devices 0 and 1, then
    # 3 s on device 0 alone.
    runs_of(
        conn,
        [("t.py::a", Try("passed", device=0, duration_s=3.0)),
         ("t.py::b", Try("passed", device=1, duration_s=1.0))],
        [("t.py::a", Try("passed", device=0, duration_s=3.0))],
    )  # fmt: skip
    for run_id, took in (("r0", 10.0), ("r1", 7.0)):
        conn.execute(
            "INSERT INTO run_phases (run_id, phase, source, starts, ends, returncode, duration_s)"
            " VALUES (?, 'l2', 'report.jsonl', 1, 1, 0, ?)",
            (run_id, took),
        )
    export_durations(conn, tmp_path / "d.json")
    assert load_measurements(tmp_path / "d.json")["startup:l2"] == Measured((8.0, 4.0), 2)


IMPACT_TABLES = ("impact_maps", "impact_blocks", "impact_tests")
SHADOW_TABLES = ("affected_runs", "affected_selected")  # schema 4's


@pytest.mark.parametrize("old", [1, 2])
def test_an_older_file_gains_the_phase_durations_and_the_impact_map_when_opened(
    tmp_path: Path, old: int
) -> None:
    path = tmp_path / "old.db"
    with closing(connect(path)) as made:  # today's, then taken back to schema ``old``
        for table in (*IMPACT_TABLES, *SHADOW_TABLES):
            made.execute(f"DROP TABLE {table}")
        if old == 1:
            made.execute("ALTER TABLE run_phases DROP COLUMN duration_s")
        made.execute(f"PRAGMA user_version = {old}")
    with closing(connect(path)) as opened:
        columns = [row[1] for row in opened.execute("PRAGMA table_info(run_phases)")]
        assert "duration_s" in columns
        tables = {row[0] for row in opened.execute("SELECT name FROM sqlite_master")}
        assert {*IMPACT_TABLES, *SHADOW_TABLES} <= tables
        assert opened.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_the_file_gets_the_mode_a_plain_open_would_give(
    conn: sqlite3.Connection, tmp_path: Path, umask: int, mode: int
) -> None:
    """Not mkstemp's 0600: a file for the user's CI tools and group, as ``open()`` makes it."""
    runs_of(conn, [(TEST, Try("passed", duration_s=2.0))])
    out = tmp_path / "d.json"
    previous = os.umask(umask)
    try:
        export_durations(conn, out)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(out.stat().st_mode) == mode
