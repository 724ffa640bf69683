"""A run reads its own records from a report file that holds a long history: only what was
appended since its last look, and only its own lines, so the history costs it nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from simpler.orchestrator.context import RunContext, RunSetup
from simpler.orchestrator.options import RunOptions
from simpler.orchestrator.report_phase import report_phase
from simpler.orchestrator.run_identity import run_id_for
from simpler.reporting import follow, report_file
from simpler.reporting.follow import ReportFollower, latest_run
from simpler.reporting.prune import prune_before
from simpler.reporting.records import Record, TestRecord


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as stream:
        stream.write(data)


def _line(run: str, nodeid: str, ts: float = 1.0, **fields: Any) -> bytes:
    record = {"schema": 1, "run": run, "ts": ts, "phase": "l2", "type": "test", "nodeid": nodeid}
    return (json.dumps({**record, **fields}, separators=(",", ":")) + "\n").encode()


def _history(path: Path, runs: int, per_run: int) -> None:
    with open(path, "ab") as stream:
        for run in range(runs):
            for index in range(per_run):
                stream.write(_line(f"old-{run}", f"t.py::test_{index}", ts=float(run)))


def _nodeids(records: list[Record]) -> list[str]:
    return [r.raw["nodeid"] for r in records]


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every line the follower hands to the JSON parser."""
    parsed: list[str] = []

    def counting(line: str) -> Record | None:
        parsed.append(line)
        return report_file.parse_record(line)

    monkeypatch.setattr(follow, "parse_record", counting)
    return parsed


def test_each_look_returns_what_was_appended_since_and_only_this_runs(tmp_path: Path) -> None:
    path = tmp_path / "report.jsonl"
    _history(path, runs=3, per_run=5)
    follower = ReportFollower(path, "mine")
    assert follower.records() == []

    _append(path, _line("mine", "a") + _line("other", "x") + _line("mine", "b"))
    first = follower.records()
    assert _nodeids(first) == ["a", "b"]

    _append(path, _line("mine", "c"))
    second = follower.records()
    # The retry phase slices a later list at an earlier one's length to see what is new.
    assert _nodeids(second[len(first) :]) == ["c"]
    assert _nodeids(second) == ["a", "b", "c"]


def test_a_torn_last_line_is_left_for_the_next_look(tmp_path: Path) -> None:
    path = tmp_path / "report.jsonl"
    whole = _line("mine", "a")
    path.write_bytes(_line("mine", "before") + whole[:20])
    follower = ReportFollower(path, "mine")
    assert _nodeids(follower.records()) == ["before"]
    assert follower.malformed == 0  # still being written: not malformed

    _append(path, whole[20:])
    assert _nodeids(follower.records()) == ["before", "a"]
    assert follower.malformed == 0


def test_a_malformed_line_of_the_run_is_counted_once(tmp_path: Path) -> None:
    path = tmp_path / "report.jsonl"
    path.write_bytes(b'{"schema":1,"run":"mine","type":"te\n' + _line("mine", "a"))
    follower = ReportFollower(path, "mine")
    follower.records()
    _append(path, _line("mine", "b"))
    assert _nodeids(follower.records()) == ["a", "b"]
    assert follower.malformed == 1


def test_history_of_other_runs_is_never_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "report.jsonl"
    _history(path, runs=50, per_run=100)
    _append(path, _line("mine", "a") + _line("mine", "b"))
    parsed = _count_parses(monkeypatch)

    follower = ReportFollower(path, "mine")
    assert _nodeids(follower.records()) == ["a", "b"]
    assert len(parsed) == 2  # of 5002 lines, only the run's own

    _append(path, _line("other", "x") + _line("mine", "c"))
    assert _nodeids(follower.records()) == ["a", "b", "c"]
    assert len(parsed) == 3  # the next look parses only what was appended, and only the run's


def test_a_continued_run_finds_its_records_in_a_new_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `simpler run --phases l2`, then `--phases resource` later: a new context, the same run.
    path = tmp_path / "report.jsonl"
    path.write_bytes(_line("mine", "l2-test"))
    _history(path, runs=20, per_run=50)  # other runs appended in between
    parsed = _count_parses(monkeypatch)
    ctx = _context(path, "mine")
    assert _nodeids(ctx.records()) == ["l2-test"]
    ctx.write(ctx.record(TestRecord, nodeid="resource-test", outcome="passed"))
    assert _nodeids(ctx.records()) == ["l2-test", "resource-test"]
    assert len(parsed) == 2


def test_a_file_replaced_by_prune_under_a_follower_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "report.jsonl"
    _history(path, runs=3, per_run=4)
    _append(path, _line("mine", "a") + _line("mine", "b"))
    follower = ReportFollower(path, "mine")
    assert _nodeids(follower.records()) == ["a", "b"]

    prune_before(path, "mine")  # a new, shorter file renamed over the old one
    _append(path, _line("mine", "c"))
    assert _nodeids(follower.records()) == ["a", "b", "c"]


def test_a_file_cut_shorter_or_rewritten_in_place_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "report.jsonl"
    path.write_bytes(_line("mine", "a") + _line("mine", "b"))
    follower = ReportFollower(path, "mine")
    assert _nodeids(follower.records()) == ["a", "b"]

    with open(path, "r+b") as stream:  # same file, shorter: the offset is past its end
        stream.truncate(0)
        stream.write(_line("mine", "z"))
    assert _nodeids(follower.records()) == ["z"]

    with open(path, "r+b") as stream:  # same file, same length, other history
        stream.write(_line("mine", "y"))
    _append(path, _line("mine", "w"))
    assert _nodeids(follower.records()) == ["y", "w"]


def test_an_unreadable_file_is_an_error_for_the_follower_and_none_for_the_context(
    tmp_path: Path,
) -> None:
    path = tmp_path / "absent.jsonl"
    with pytest.raises(report_file.ReportUnreadable, match="cannot read report file"):
        ReportFollower(path, "mine").records()
    assert _context(path, "r").records() == []


def test_the_latest_run_is_found_from_the_end_without_parsing_the_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "report.jsonl"
    _history(path, runs=100, per_run=100)  # far more than one block read backwards
    _append(
        path,
        _line("latest", "a")
        + b'{"schema":1,"run":"","ts":1,"phase":"","type":"test","nodeid":"plain"}\n'
        + b'{"schema":1,"run":"torn',
    )
    parsed = _count_parses(monkeypatch)
    assert latest_run(path) == "latest"
    assert len(parsed) == 3  # the torn tail, the run-less record, the latest run's: no more
    parsed.clear()
    assert run_id_for(path, starts_run=False) == "latest"
    assert len(parsed) == 3


def test_the_latest_run_of_an_empty_or_missing_file_is_none(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert latest_run(tmp_path / "empty.jsonl") is None
    assert latest_run(tmp_path / "absent.jsonl") is None
    assert run_id_for(tmp_path / "absent.jsonl", starts_run=False) != ""


def test_a_line_longer_than_a_block_is_read_whole_backwards(tmp_path: Path) -> None:
    path = tmp_path / "report.jsonl"
    path.write_bytes(_line("first", "a") + _line("long", "b", tail="x" * 200_000))
    assert latest_run(path) == "long"


def test_the_report_phase_parses_only_the_runs_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "report.jsonl"
    _history(path, runs=20, per_run=50)
    ctx = _context(path, "mine")
    ctx.state.current_phase = "l2"
    ctx.write(ctx.record(TestRecord, nodeid="t.py::test_mine", outcome="failed", message="boom"))
    parsed = _count_parses(monkeypatch)
    assert report_phase(ctx) == 1  # the run's own failure decides, not the history's passes
    assert len(parsed) == 1
    out = capsys.readouterr().out
    assert "t.py::test_mine" in out and "old-" not in out


def _context(report: Path, run_id: str) -> RunContext:
    return RunContext(RunSetup(RunOptions("a5sim", "0", "l2"), [0], report, run_id))
