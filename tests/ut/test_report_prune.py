"""``simpler report --prune-before RUN|DATE``: a long-lived report file trimmed atomically,
by run or by date, while other processes keep appending to it, and bad input refused."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from simpler import report
from simpler.base.compat import UTC
from simpler.cli import main
from simpler.contract import EXIT_INFRA, EXIT_USAGE
from simpler.reporting import report_file
from simpler.reporting.prune import parse_cutoff, prune_before

DAY_1 = datetime(2026, 1, 1, tzinfo=UTC).timestamp()
DAY = 86_400.0


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as stream:
        stream.write(data)


def _write(path: Path, runs: list[tuple[str, float, int]]) -> None:
    """Runs in order, each ``count`` test records from its start ``ts`` on."""
    with open(path, "ab") as stream:
        for run, ts, count in runs:
            for index in range(count):
                record = report.make_record("test", nodeid=f"t.py::test_{index}")
                record.update(run=run, ts=ts + index)
                stream.write((json.dumps(record) + "\n").encode())


def _runs(path: Path) -> list[str]:
    return list(dict.fromkeys(r["run"] for r in report_file.read(path)))


def test_prune_before_a_run_drops_the_runs_that_started_before_it(tmp_path: Path) -> None:
    path = tmp_path / "report.jsonl"
    _write(path, [("a", DAY_1, 3), ("b", DAY_1 + DAY, 2)])
    _write(path, [("a", DAY_1 + 5, 1)])  # a late record of run a, after b started
    _write(path, [("c", DAY_1 + 2 * DAY, 4)])

    result = prune_before(path, "b")

    assert _runs(path) == ["b", "c"]
    assert (result.removed_runs, result.removed_records) == (1, 4)
    assert (result.kept_runs, result.kept_records) == (2, 6)
    line = result.line(path)
    assert "removed 1 run(s), 4 record(s)" in line and "kept 2 run(s), 6 record(s)" in line


def test_kept_lines_are_copied_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "report.jsonl"
    _write(path, [("a", DAY_1, 2)])
    kept = (
        b'{"schema": 1, "run": "b", "ts": 5, "phase": "l2", "type": "test", "nodeid": "\\u00e9"}\n'
    )
    _append(path, kept)
    prune_before(path, "b")
    assert path.read_bytes() == kept


def test_prune_before_a_date_drops_the_runs_that_started_before_it(tmp_path: Path) -> None:
    path = tmp_path / "report.jsonl"
    # Run a started on day 1 and wrote until day 3: it started before the cut, all of it goes.
    _write(path, [("a", DAY_1, 1), ("b", DAY_1 + 2 * DAY, 1), ("a", DAY_1 + 3 * DAY, 1)])
    _write(path, [("c", DAY_1 + 4 * DAY, 2)])

    result = prune_before(path, "2026-01-03")  # midnight UTC starting day 3

    assert _runs(path) == ["b", "c"]
    assert (result.removed_runs, result.removed_records, result.kept_records) == (1, 2, 3)


def test_dates_are_iso_and_utc_unless_they_name_a_zone() -> None:
    assert parse_cutoff("2026-01-02") == DAY_1 + DAY
    assert parse_cutoff("2026-01-02T06:00:00") == DAY_1 + DAY + 6 * 3600
    assert parse_cutoff("2026-01-02T06:00:00Z") == DAY_1 + DAY + 6 * 3600
    assert parse_cutoff("2026-01-02T08:00:00+02:00") == DAY_1 + DAY + 6 * 3600
    assert parse_cutoff("last tuesday") is None
    assert parse_cutoff("20261203T083646-abc123") is None  # a run id is not a date


def test_nothing_to_drop_leaves_the_file_untouched(tmp_path: Path) -> None:
    path = tmp_path / "report.jsonl"
    _write(path, [("a", DAY_1, 2)])
    before = os.stat(path)
    result = prune_before(path, "a")
    assert (result.removed_records, result.kept_records) == (0, 2)
    assert os.stat(path).st_ino == before.st_ino


def _append_many(path: str, writer: int, count: int) -> None:
    for index in range(count):
        record = report.make_record("test", nodeid=f"w{writer}::{index}", tail="x" * 300)
        record["run"] = "live"
        report_file.append(path, record)


def test_prune_under_concurrent_writers_loses_and_tears_no_record(tmp_path: Path) -> None:
    path = tmp_path / "report.jsonl"
    report_file.append(path, {**report.make_record("test", nodeid="start"), "run": "live"})
    cutoff = datetime.fromtimestamp(time.time() - 3600, UTC).isoformat()
    writers, per_writer = 4, 300
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(target=_append_many, args=(str(path), w, per_writer))
        for w in range(writers)
    ]
    for process in processes:
        process.start()
    rewrites = 0
    while any(p.is_alive() for p in processes) or rewrites < 3:
        # A stale run to drop each time, so that every prune really renames a new file in.
        _write(path, [(f"stale-{rewrites}", DAY_1, 1)])
        assert prune_before(path, cutoff).removed_records == 1
        rewrites += 1
    for process in processes:
        process.join()
        assert process.exitcode == 0

    contents = report_file.read_contents(path)
    assert contents.malformed == 0
    assert _runs(path) == ["live"]
    written = {r["nodeid"] for r in contents.records} - {"start"}
    assert written == {f"w{w}::{i}" for w in range(writers) for i in range(per_writer)}
    assert not [p for p in tmp_path.iterdir() if p.name != "report.jsonl"]  # no temp left


def _cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["report", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_cli_prints_one_line_and_trims_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "report.jsonl"
    _write(path, [("a", DAY_1, 3), ("b", DAY_1 + DAY, 1)])
    code, out, err = _cli(tmp_path, capsys, "--file", str(path), "--prune-before", "b")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"pruned {path}: removed 1 run(s), 3 record(s); kept 1 run(s), 1 record(s)"
    ]
    assert _runs(path) == ["b"]


@pytest.mark.parametrize(
    ("args", "code", "names"),
    [
        (["--prune-before", "no-such-run"], EXIT_USAGE, "neither a run of"),
        (["--prune-before", "2026-13-45"], EXIT_USAGE, "nor an ISO date"),
        (["--prune-before", "a", "--junit", "j.xml"], EXIT_USAGE, "prints no summary"),
        (["--prune-before", "a", "--file", "other.jsonl"], EXIT_USAGE, "trims one --file"),
    ],
    ids=["unknown-run", "bad-date", "with-junit", "two-files"],
)
def test_bad_input_is_one_line_and_leaves_the_file_alone(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    code: int,
    names: str,
) -> None:
    path = tmp_path / "report.jsonl"
    _write(path, [("a", DAY_1, 2)])
    before = path.read_bytes()
    got, out, err = _cli(tmp_path, capsys, "--file", str(path), *args)
    assert got == code
    assert out == "" and len(err.splitlines()) == 1 and names in err
    assert path.read_bytes() == before


@pytest.mark.parametrize("name", ["absent.jsonl", "."], ids=["missing", "a-directory"])
def test_an_unreadable_file_is_an_infrastructure_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    code, out, err = _cli(tmp_path, capsys, "--file", str(tmp_path / name), "--prune-before", "a")
    assert code == EXIT_INFRA
    assert out == "" and len(err.splitlines()) == 1 and "cannot read report file" in err


def test_the_command_line_never_shows_a_traceback(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "simpler",
            "report",
            "--file",
            str(tmp_path / "x.jsonl"),
            "--prune-before",
            "2026-01-01",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == EXIT_INFRA
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1
