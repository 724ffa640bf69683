"""Shadow runs in the history: the selection's decision kept with the run, and the miss rate
counted from the run's verdicts, on a file and on a server alike.

The reports are written as ``simpler run --affected-since REV --affected-shadow`` writes
them: the L2 phase's start record carries the decision (``affected``), every test runs.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from test_history_attribution import Run
from test_history_cli import run_cli

from simpler.history.copy import copy_history
from simpler.history.importer import import_records, import_reports
from simpler.history.model import ShadowMisses
from simpler.history.prune import prune_before
from simpler.history.schema import SCHEMA_VERSION, connect
from simpler.history.shadow_misses import shadow_misses
from simpler.history.store import Connection, open_store
from simpler.history.window import select_window

INSIDE = "tests/test_calc.py::test_double"  # selected, and fails
OUTSIDE = "tests/test_calc.py::test_triple"  # left out, and fails: the miss
GREEN = "tests/test_calc.py::test_half"  # left out, passes: no miss
TESTS = [GREEN, INSIDE, OUTSIDE]
SHADOW_TABLES = ("affected_runs", "affected_selected")


def decision(*selected: str, shadow: bool = True, run_all: str | None = None) -> dict[str, Any]:
    """The L2 start record's ``affected``, as simpler.orchestrator.affected_run writes it."""
    return {
        "since": "origin/main",
        "map_commit": "58ea519a36" + "0" * 30,
        "run_all": run_all,
        "non_code": None,
        "selected": len(selected),
        "of": len(TESTS),
        "reasons": {nodeid: ["ran changed block pkg/calc.py::double"] for nodeid in selected},
        "shadow": shadow,
    }


def shadow_run(
    run: Run,
    affected: dict[str, Any] | None,
    failing: tuple[str, ...] = (INSIDE, OUTSIDE),
    *,
    quarantined: tuple[str, ...] = (),
) -> Run:
    """Every test ran (shadow mode); ``failing`` failed, the rest passed."""
    plan = {"planned": TESTS, "no_device": TESTS, "selected": len(TESTS)}
    run.add("l2", "phase", event="start", shard=None, platform="a5sim", **plan,
            **({"affected": affected} if affected is not None else {}))  # fmt: skip
    for nodeid in TESTS:
        if nodeid in failing:
            run.test("l2", nodeid, "failed", message="AssertionError: 4 != 5",
                     quarantined=nodeid in quarantined)  # fmt: skip
        else:
            run.test("l2", nodeid, "passed")
    return run.end("l2", 1 if failing else 0).start("report").end("report", 1 if failing else 0)


def rows(conn: Connection, table: str) -> list[tuple[Any, ...]]:
    return sorted(conn.execute(f"SELECT * FROM {table}").fetchall(), key=repr)


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    with closing(connect(tmp_path / "history.db")) as opened:
        yield opened


def test_a_shadow_run_keeps_its_decision_and_counts_the_failure_it_would_miss(
    conn: sqlite3.Connection, tmp_path: Path
) -> None:
    run = shadow_run(Run(), decision(INSIDE))
    import_reports(conn, [run.write(tmp_path / "r.jsonl")])
    assert rows(conn, "affected_runs") == [
        (run.run, "origin/main", "58ea519a36" + "0" * 30, None, 1, 3)
    ]
    assert rows(conn, "affected_selected") == [(run.run, INSIDE)]
    misses = shadow_misses(conn)
    assert misses == ShadowMisses(1, 2, 1, 1, ((run.run, OUTSIDE),))
    assert misses.rate == 0.5
    assert misses.headline() == (
        "the selection would have missed 1 of 2 failure(s) over 1 shadow run(s) (50%)"
    )


def test_importing_again_or_from_memory_gives_the_same_rows_and_figures(tmp_path: Path) -> None:
    run = shadow_run(Run(), decision(INSIDE))
    report = run.write(tmp_path / "r.jsonl")
    with (
        closing(connect(tmp_path / "once.db")) as once,
        closing(connect(tmp_path / "again.db")) as again,
        closing(connect(tmp_path / "memory.db")) as memory,
    ):
        import_reports(once, [report])
        import_reports(again, [report])
        import_reports(again, [report])
        import_records(memory, run.records, only_run=run.run)  # as simpler run --history does
        for table in SHADOW_TABLES:
            assert rows(again, table) == rows(once, table) == rows(memory, table), table
        assert shadow_misses(again) == shadow_misses(once) == shadow_misses(memory)
        assert shadow_misses(again).missed == 1


def test_a_run_that_was_no_shadow_run_keeps_nothing_new(
    conn: sqlite3.Connection, tmp_path: Path
) -> None:
    selecting = shadow_run(Run("run-selecting"), decision(INSIDE, shadow=False), (INSIDE,))
    plain = shadow_run(Run("run-plain"), None)
    import_reports(conn, [selecting.write(tmp_path / "a.jsonl"), plain.write(tmp_path / "b.jsonl")])
    assert [rows(conn, table) for table in SHADOW_TABLES] == [[], []]
    assert shadow_misses(conn) == ShadowMisses(0, 0, 0, 0)
    assert shadow_misses(conn).headline().startswith("no shadow run")


def test_a_decision_that_ran_everything_misses_nothing(
    conn: sqlite3.Connection, tmp_path: Path
) -> None:
    # run_all: every test selected; the record's reasons name them all, and even a run whose
    # record named none would miss nothing.
    rule = "setup.cfg changed: the map has no account of it"
    run = shadow_run(Run(), {**decision(), "run_all": rule})
    import_reports(conn, [run.write(tmp_path / "r.jsonl")])
    assert rows(conn, "affected_runs")[0][3] == rule
    assert shadow_misses(conn) == ShadowMisses(1, 2, 0, 0)


def test_passes_recoveries_and_quarantined_failures_are_no_misses(
    conn: sqlite3.Connection, tmp_path: Path
) -> None:
    run = shadow_run(Run(), decision(), (OUTSIDE,), quarantined=(OUTSIDE,))
    run.start("retry").test("retry", GREEN, "flaky", attempt=2).end("retry")
    import_reports(conn, [run.write(tmp_path / "r.jsonl")])
    assert shadow_misses(conn) == ShadowMisses(1, 0, 0, 0)
    assert shadow_misses(conn).rate is None
    assert shadow_misses(conn).headline().endswith("0 of 0 failure(s) over 1 shadow run(s)")


def test_the_newest_shadow_runs_count_and_their_misses_come_first(
    conn: sqlite3.Connection, tmp_path: Path
) -> None:
    runs = [
        shadow_run(Run("run-old", start=1_000.0), decision(INSIDE), (OUTSIDE,)),
        shadow_run(Run("run-mid", start=2_000.0), decision(INSIDE, OUTSIDE)),
        shadow_run(Run("run-new", start=3_000.0), decision(), (INSIDE, OUTSIDE)),
    ]
    import_reports(conn, [r.write(tmp_path / f"{r.run}.jsonl") for r in runs])
    assert shadow_misses(conn) == ShadowMisses(
        3, 5, 3, 2, (("run-new", INSIDE), ("run-new", OUTSIDE), ("run-old", OUTSIDE))
    )
    assert shadow_misses(conn).headline().endswith("3 of 5 failure(s) over 3 shadow run(s) (60%)")
    assert shadow_misses(conn, last=2) == ShadowMisses(
        2, 4, 2, 1, (("run-new", INSIDE), ("run-new", OUTSIDE))
    )
    assert shadow_misses(conn, named=1).newest == (("run-new", INSIDE),)
    assert shadow_misses(conn, window=select_window(last_runs=1)).runs == 1
    with pytest.raises(ValueError, match="at least 1"):
        shadow_misses(conn, last=0)


def test_a_decision_that_does_not_read_is_imported_without_a_traceback(
    conn: sqlite3.Connection, tmp_path: Path
) -> None:
    bad = {"since": ["x"], "map_commit": 7, "run_all": 3, "of": "three", "reasons": ["a"],
           "shadow": True}  # fmt: skip
    run = shadow_run(Run(), bad)
    import_reports(conn, [run.write(tmp_path / "r.jsonl")])
    assert rows(conn, "affected_runs") == [(run.run, "['x']", None, None, 0, 0)]
    assert shadow_misses(conn) == ShadowMisses(1, 2, 2, 1, ((run.run, INSIDE), (run.run, OUTSIDE)))


def test_prune_and_copy_take_a_runs_decision_with_it(tmp_path: Path) -> None:
    run = shadow_run(Run(), decision(INSIDE))
    with (
        closing(connect(tmp_path / "a.db")) as source,
        closing(connect(tmp_path / "b.db")) as target,
    ):
        import_reports(source, [run.write(tmp_path / "r.jsonl")])
        copy_history(source, target)
        copy_history(source, target)  # again: the same rows
        for table in SHADOW_TABLES:
            assert rows(target, table) == rows(source, table) != [], table
        prune_before(source, before=10_000_000_000.0)
        assert [rows(source, table) for table in SHADOW_TABLES] == [[], []]


def test_the_history_page_shows_the_miss_rate_of_the_window(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "history.db"
    runs = [
        shadow_run(Run("run-old", start=1_000.0), decision(INSIDE), (OUTSIDE,)),
        shadow_run(Run("run-new", start=2_000.0), decision(INSIDE, OUTSIDE), (INSIDE,)),
    ]
    reports = [str(r.write(tmp_path / f"{r.run}.jsonl")) for r in runs]
    assert run_cli(capsys, "import", *reports, "--db", str(db))[0] == 0
    for window, line in (
        ((), "missed 1 of 2 failure(s) over 2 shadow run(s) (50%)"),
        (("--runs", "1"), "missed 0 of 1 failure(s) over 1 shadow run(s) (0%)"),
    ):
        out = tmp_path / "page.html"
        code, _, err = run_cli(capsys, "html", str(out), "--db", str(db), *window)
        assert code == 0, err
        assert line in out.read_text(), window


def test_a_schema_3_file_gains_the_shadow_tables_when_opened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "old.db"
    with closing(connect(path)) as made:  # today's, taken back to schema 3
        for table in SHADOW_TABLES:
            made.execute(f"DROP TABLE {table}")
        made.execute("PRAGMA user_version = 3")
    run = shadow_run(Run(), decision(INSIDE))
    code, _, err = run_cli(
        capsys, "import", str(run.write(tmp_path / "r.jsonl")), "--db", str(path)
    )
    assert code == 0, err
    with closing(connect(path)) as opened:
        assert opened.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
        assert shadow_misses(opened).missed == 1


def test_a_server_keeps_the_same_decision_and_figures_as_a_file(
    postgres_url: str, tmp_path: Path
) -> None:
    runs = [
        shadow_run(Run("run-old", start=1_000.0), decision(INSIDE), (OUTSIDE,)),
        shadow_run(Run("run-new", start=2_000.0), decision(INSIDE)),
    ]
    reports = [r.write(tmp_path / f"{r.run}.jsonl") for r in runs]
    figures, kept = [], []
    for store in (str(tmp_path / "history.db"), postgres_url):
        conn = open_store(store)
        try:
            import_reports(conn, reports)
            import_reports(conn, reports)  # again: nothing changes
            figures.append(shadow_misses(conn))
            kept.append([rows(conn, table) for table in SHADOW_TABLES])
        finally:
            conn.close()
    assert (
        figures[0]
        == figures[1]
        == ShadowMisses(2, 3, 2, 2, (("run-new", OUTSIDE), ("run-old", OUTSIDE)))
    )
    assert kept[0] == kept[1]
