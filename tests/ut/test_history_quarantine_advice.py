"""``simpler history quarantine``: which tests the scores call to quarantine, and which
entries the history shows can go."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from datetime import date, timedelta
from pathlib import Path

import pytest
from history_rows import open_db, seed

from simpler.history.quarantine_advice import releases, suggestions
from simpler.history.scores import compute_scores
from simpler.history.window import EVERY_RUN
from simpler.reporting.quarantine_file import load_quarantine

FOREVER = EVERY_RUN


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    with closing(open_db(tmp_path)) as connection:
        yield connection


def entries(tmp_path: Path, *nodeids: str) -> Path:
    expires = (date.today() + timedelta(days=30)).isoformat()
    path = tmp_path / "q.toml"
    path.write_text(
        "".join(
            f'[[quarantine]]\nnodeid = "{n}"\nreason = "r"\nowner = "o"\nexpires = {expires}\n\n'
            for n in nodeids
        )
    )
    return path


def test_only_flaky_tests_above_the_threshold_with_enough_runs_are_suggested(
    conn: sqlite3.Connection, tmp_path: Path
) -> None:
    seed(
        conn,
        {
            "t.py::flaky": "..R...F...R.",  # 3 of 12 by its own fault
            "t.py::rare": "...........R",  # 1 of 12: under a 10% threshold
            "t.py::broken": "FFFFFFFFFFFF",
            "t.py::victim": "..DD..P..D..",  # the device's, never its own
            "t.py::covered": "R..R..R..R..",  # flaky, but an entry covers it already
        },
    )
    scores = compute_scores(conn)
    quarantine = load_quarantine(entries(tmp_path, "t.py::covered"))
    chosen = suggestions(scores, quarantine, threshold=0.1, min_runs=10)
    assert [s.nodeid for s in chosen] == ["t.py::flaky"]
    assert suggestions(scores, quarantine, threshold=0.1, min_runs=13) == []


def test_an_entry_is_released_after_enough_green_runs_in_a_row_on_enough_runners(
    conn: sqlite3.Connection, tmp_path: Path
) -> None:
    # The newest runs last: "fixed" passed its last 6 runs (a device fault in between says
    # nothing), "still" failed two runs ago.
    seed(
        conn,
        {"t.py::T::fixed": "FFR...D...", "t.py::T::still": "......F.R."},
        runners=["a", "b"] * 5,
    )
    quarantine = load_quarantine(entries(tmp_path, "t.py::T::fixed", "t.py::T::still"))
    found = releases(conn, quarantine, passes=6, runners=2, window=FOREVER)
    assert [(r.entry.nodeid, r.passes, r.runners) for r in found] == [
        ("t.py::T::fixed", 6, ("a", "b"))
    ]
    assert releases(conn, quarantine, passes=7, runners=2, window=FOREVER) == []


def test_one_runner_label_is_enough_where_the_history_has_only_one(
    conn: sqlite3.Connection, tmp_path: Path
) -> None:
    seed(conn, {"t.py::fixed": "F....."}, runners=["only"] * 6)
    quarantine = load_quarantine(entries(tmp_path, "t.py::fixed"))
    assert len(releases(conn, quarantine, passes=5, runners=2, window=FOREVER)) == 1


def test_a_prefix_entry_is_released_only_when_every_test_under_it_passed(
    conn: sqlite3.Connection, tmp_path: Path
) -> None:
    seed(conn, {"t.py::T::a": "......", "t.py::T::b": "....R."}, runners=["a", "b"] * 3)
    quarantine = load_quarantine(entries(tmp_path, "t.py::T", "t.py::Nobody"))
    assert releases(conn, quarantine, passes=3, runners=2, window=FOREVER) == []
    found = releases(conn, quarantine, passes=1, runners=2, window=FOREVER)
    assert [r.entry.nodeid for r in found] == []  # b's last green run is one: one runner
    found = releases(conn, quarantine, passes=1, runners=1, window=FOREVER)
    assert [r.entry.nodeid for r in found] == ["t.py::T"]  # never the entry without runs
