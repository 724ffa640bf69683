"""``simpler history show``: one mark a run, oldest first, and the runs where the test
flipped between passing and failing by its own fault."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from history_rows import HOUR, T0, Try, add_run, add_test, open_db, seed

from simpler.history.model import StripMark
from simpler.history.show import mark_of, render_show, test_strip
from simpler.history.window import select_window


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    with closing(open_db(tmp_path)) as connection:
        yield connection


def marks(conn: sqlite3.Connection, nodeid: str = "t.py::a", **bounds: Any) -> str:
    """``bounds``: select_window's (window_days, last_runs, branch, now)."""
    return "".join(m.mark for m in test_strip(conn, nodeid, window=select_window(**bounds)))


def test_each_kind_of_run_has_its_mark(conn: sqlite3.Connection) -> None:
    # passed, flaky, failed, a victim recovered by the retry, device, poison-skipped, infra,
    # quarantined, skipped, xfailed, and its own failure followed by a device fault.
    seed(conn, {"t.py::a": ".RFVDPIQsxB"})
    assert marks(conn) == ".RFDDDIQs.F"  # a recovered victim is the device's, not flaky


def test_the_strip_runs_oldest_first_and_skips_runs_without_the_test(
    conn: sqlite3.Connection,
) -> None:
    run_ids = seed(conn, {"t.py::a": "F-.", "t.py::b": "..."})
    strip = test_strip(conn, "t.py::a")
    assert [(m.run_id, m.commit, m.mark, m.started) for m in strip] == [
        (run_ids[0], "c0", "F", T0),
        (run_ids[2], "c2", ".", T0 + 2 * HOUR),
    ]
    assert marks(conn, last_runs=1) == "."
    assert test_strip(conn, "t.py::nobody") == []


def test_a_quarantined_verdict_marks_its_own_failure_q(conn: sqlite3.Connection) -> None:
    add_run(conn, "r1", started=T0)
    add_test(conn, "r1", "t.py::a", Try("failed", "test"))
    conn.execute("UPDATE verdicts SET quarantined = 1")
    assert marks(conn) == "Q"


def test_a_failure_nobody_attributed_still_reads_failed() -> None:
    mark = mark_of("error", failed_attempts=0, by_test=False, by_device=False, quarantined=False)
    assert mark == "F"


def test_show_prints_the_strip_a_legend_and_every_flip(conn: sqlite3.Connection) -> None:
    seed(conn, {"t.py::a": "..F.DF.."}, commits=[f"{i}" * 40 for i in range(8)])
    text = render_show("t.py::a", test_strip(conn, "t.py::a"))
    assert text.splitlines() == [
        "t.py::a: 8 runs, oldest first",
        "..F.DF..",
        ". passed  F failed  D device fault",
        "flips (4):",
        "  pass -> fail: run run001 (111111111111) -> run run002 (222222222222)",
        "  fail -> pass: run run002 (222222222222) -> run run003 (333333333333)",
        # The device fault between them says nothing about the test: stepped over.
        "  pass -> fail: run run003 (333333333333) -> run run005 (555555555555)",
        "  fail -> pass: run run005 (555555555555) -> run run006 (666666666666)",
    ]


def test_show_without_a_flip_or_a_run(conn: sqlite3.Connection) -> None:
    one = [StripMark("r1", None, "R")]
    assert render_show("t.py::a", one).splitlines()[1:] == [
        "R",
        "R passed after a failed attempt",
        "flips: none",
    ]
    assert render_show("t.py::gone", []) == "no runs of t.py::gone in the history\n"
