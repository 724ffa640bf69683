"""``simpler history prune --before DATE``: whole runs go, with every row that belongs to them,
in one transaction; the date reads as ISO in UTC or is refused in one line."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing
from datetime import datetime
from pathlib import Path

import pytest
from history_rows import HOUR, T0, add_run, open_db, seed

from simpler.base.compat import UTC
from simpler.history.prune import PruneResult, parse_before, prune_before


def counts(conn: sqlite3.Connection) -> tuple[int, int, int]:
    return tuple(  # type: ignore[return-value]
        conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        for table in ("runs", "attempts", "verdicts")
    )


def orphans(conn: sqlite3.Connection) -> int:
    return sum(
        conn.execute(
            f"SELECT count(*) FROM {table} WHERE run_id NOT IN (SELECT run_id FROM runs)"
        ).fetchone()[0]
        for table in ("attempts", "verdicts")
    )


@pytest.fixture
def db(tmp_path: Path) -> Path:
    with closing(open_db(tmp_path)) as conn:
        # Runs 0-5, an hour apart; F is two attempts, . one: runs 0-2 hold 3 + 3 + 2 attempts.
        seed(conn, {"t.py::a": "F..F..", "t.py::b": ".F...."})
    return tmp_path / "history.db"


@pytest.fixture
def conn(db: Path) -> Iterator[sqlite3.Connection]:
    with closing(open_db(db.parent)) as connection:
        yield connection


def test_the_runs_before_the_date_go_with_their_attempts_and_verdicts(
    conn: sqlite3.Connection,
) -> None:
    assert prune_before(conn, T0 + 2.5 * HOUR) == PruneResult(runs_removed=3, attempts_removed=8)
    assert counts(conn) == (3, 7, 6)
    assert orphans(conn) == 0
    assert prune_before(conn, T0) == PruneResult(0, 0)


def test_a_pruned_run_leaves_no_row_behind_with_foreign_keys_off(db: Path) -> None:
    # SQLite's default, and the history's: no cascade to lean on.
    with closing(sqlite3.connect(db, isolation_level=None)) as conn:
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 0
        prune_before(conn, T0 + 2.5 * HOUR)
        assert orphans(conn) == 0 and counts(conn) == (3, 7, 6)


def test_a_prune_that_fails_midway_removes_nothing(conn: sqlite3.Connection) -> None:
    before = counts(conn)
    # Deleting run 2's verdicts fails after runs 0 and 1 are gone inside the transaction.
    conn.execute(
        "CREATE TEMP TRIGGER refuse BEFORE DELETE ON verdicts WHEN old.run_id = 'run002' "
        "BEGIN SELECT RAISE(ABORT, 'disk gone'); END"
    )
    with pytest.raises(sqlite3.IntegrityError, match="disk gone"):
        prune_before(conn, T0 + 2.5 * HOUR)
    assert counts(conn) == before
    assert not conn.in_transaction


def test_a_run_without_a_start_time_ages_by_its_import(conn: sqlite3.Connection) -> None:
    add_run(conn, "undated-old", started=None, imported=T0 - HOUR)
    add_run(conn, "undated-new", started=None, imported=T0 + 10 * HOUR)
    prune_before(conn, T0)
    runs = {row[0] for row in conn.execute("SELECT run_id FROM runs")}
    assert "undated-old" not in runs and "undated-new" in runs


def test_the_log_is_truncated_and_vacuum_frees_the_pages(tmp_path: Path) -> None:
    with closing(open_db(tmp_path)) as conn:
        seed(conn, {f"t.py::test_{i}": "F..." for i in range(300)})  # pages enough to free
        prune_before(conn, T0 + 1.5 * HOUR)
        assert Path(f"{tmp_path / 'history.db'}-wal").stat().st_size == 0
        assert conn.execute("PRAGMA freelist_count").fetchone()[0] > 0  # free inside the file
        prune_before(conn, T0 + 2.5 * HOUR, vacuum=True)
        assert conn.execute("PRAGMA freelist_count").fetchone()[0] == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2025-01-31", datetime(2025, 1, 31, tzinfo=UTC)),
        (" 2025-01-31T12:30 ", datetime(2025, 1, 31, 12, 30, tzinfo=UTC)),
        ("2025-01-31T12:00Z", datetime(2025, 1, 31, 12, tzinfo=UTC)),
        ("2025-01-31T12:00+02:00", datetime(2025, 1, 31, 10, tzinfo=UTC)),
    ],
)
def test_before_reads_an_iso_date_in_utc(text: str, expected: datetime, far_from_utc: None) -> None:
    assert parse_before(text) == expected.timestamp()


@pytest.fixture
def far_from_utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A local time zone that is not UTC, so that "UTC" cannot pass for "local"."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("text", ["yesterday", "", "2025-13-01", "31/01/2025"])
def test_a_date_that_is_not_one_is_refused_in_one_line(text: str) -> None:
    with pytest.raises(ValueError) as error:
        parse_before(text)
    assert repr(text) in str(error.value) and "\n" not in str(error.value)
