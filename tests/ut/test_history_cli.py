"""``simpler history`` as a user meets it with bad input: one line on stderr, the documented
exit code (2 usage, 3 infrastructure), never a traceback, and nothing already stored lost."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import date, timedelta
from pathlib import Path

import pytest
from test_history_attribution import Run, hang_with_victims

from simpler import cli
from simpler.history.schema import SCHEMA_VERSION


def main(argv: list[str]) -> int:
    """``simpler history`` with ``argv``, as the command line has it."""
    return cli.main(["history", *argv])


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture
def db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    path = tmp_path / "history.db"
    report = hang_with_victims(Run(), reset_fails=True).write(tmp_path / "report.jsonl")
    code, _, err = run_cli(capsys, "import", str(report), "--db", str(path))
    assert code == 0, err
    return path


def test_a_text_file_as_the_database_is_one_line_and_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = tmp_path / "notes.db"
    text.write_text("these are my notes, not a database\n" * 200)
    report = hang_with_victims(Run(), reset_fails=True).write(tmp_path / "r.jsonl")
    for argv in (["flaky"], ["import", str(report)], ["prune", "--before", "2020-01-01"]):
        code, _, err = run_cli(capsys, *argv, "--db", str(text))
        assert code == 3, (argv, err)
        assert str(text) in one_line(err)
    assert text.read_text().startswith("these are my notes")  # nothing written into it


def test_a_truncated_database_is_one_line_and_exit_3(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])
    for wal in db.parent.glob(db.name + "-*"):
        wal.unlink()
    for argv in (["flaky"], ["show", "t.py::x"], ["html", str(db.parent / "p.html")]):
        code, _, err = run_cli(capsys, *argv, "--db", str(db))
        assert code == 3, (argv, err)
        one_line(err)


def test_a_database_of_a_newer_schema_is_refused(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with closing(sqlite3.connect(db)) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    code, _, err = run_cli(capsys, "flaky", "--db", str(db))
    assert code == 3
    assert "newer" in one_line(err)


def test_a_file_that_is_not_a_report_is_exit_2_and_keeps_what_was_stored(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = run_cli(capsys, "flaky", "--db", str(db), "--format", "json")[1]
    picture = tmp_path / "picture.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    code, _, err = run_cli(capsys, "import", str(picture), "--db", str(db))
    assert code == 2
    assert "not a simpler report" in one_line(err)
    code, _, err = run_cli(capsys, "import", str(tmp_path / "missing.jsonl"), "--db", str(db))
    assert code == 2 and "no such report file" in one_line(err)
    assert run_cli(capsys, "flaky", "--db", str(db), "--format", "json")[1] == before


def test_a_missing_database_is_named_not_created_by_a_reader(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "none.db"
    for argv in (["flaky"], ["show", "t.py::x"], ["prune", "--before", "2020-01-01"]):
        code, _, err = run_cli(capsys, *argv, "--db", str(missing))
        assert code == 2 and f"no history database {missing}" in one_line(err)
    assert not missing.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["flaky", "--window", "0"],
        ["flaky", "--runs", "-3"],
        ["flaky", "--window", "7", "--runs", "5"],
        ["flaky", "--format", "yaml"],
        ["prune", "--before", "last tuesday"],
        ["quarantine", "--suggest", "--threshold", "2"],
        ["quarantine", "--suggest", "--release"],
        ["quarantine", "--suggest", "--days", "120", "--owner", "me"],
    ],
)
def test_bad_flags_are_one_line_and_exit_2(
    db: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(capsys, *argv, "--db", str(db))
    assert code == 2, err
    assert "Traceback" not in err


def test_a_quarantine_file_with_a_syntax_error_names_its_line(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "simpler-quarantine.toml"
    broken.write_text('[[quarantine]]\nnodeid = "t.py::x"\nreason = "flaky\n')
    for what in ("--suggest", "--release"):
        code, _, err = run_cli(
            capsys, "quarantine", what, "--db", str(db), "--quarantine", str(broken)
        )
        assert code == 2
        assert f"{broken}:3" in one_line(err)


def test_release_without_a_quarantine_file_says_so(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "none.toml"
    code, _, err = run_cli(
        capsys, "quarantine", "--release", "--db", str(db), "--quarantine", str(missing)
    )
    assert code == 2 and "no quarantine file" in one_line(err)


def test_an_entry_written_by_suggest_loads_and_expires_within_its_days(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A test that fails by its own fault in 3 runs of 12 is suggested, with the owner given.
    db = tmp_path / "h.db"
    for index in range(12):
        run = Run(run=f"run-{index:02d}", start=1_000.0 + index * 100)
        outcome = "failed" if index % 4 == 0 else "passed"
        run.start("l2").test("l2", "t.py::flaky", outcome, message="AssertionError")
        run.test("l2", "t.py::steady", "passed").end("l2", 1 if outcome == "failed" else 0)
        path = run.write(tmp_path / f"r{index}.jsonl")
        assert run_cli(capsys, "import", str(path), "--db", str(db))[0] == 0
    entries = tmp_path / "q.toml"
    code, out, err = run_cli(
        capsys, "quarantine", "--suggest", "--write", "--owner", "ops", "--days", "14",
        "--db", str(db), "--quarantine", str(entries),
    )  # fmt: skip
    assert code == 0, err
    text = entries.read_text()
    assert "t.py::flaky" in text and "t.py::steady" not in text
    assert f"expires = {(date.today() + timedelta(days=14)).isoformat()}" in text
    code, out, _ = run_cli(
        capsys,
        "quarantine",
        "--suggest",
        "--owner",
        "ops",
        "--db",
        str(db),
        "--quarantine",
        str(entries),
    )
    assert code == 0 and "no test calls for a quarantine" in out  # already covered
