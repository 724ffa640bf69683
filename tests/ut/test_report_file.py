"""The report file: concurrent appends never tear a line; readers skip and count bad lines."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from simpler import report


def _append_many(path: str, writer: int, count: int) -> None:
    for i in range(count):
        report.append(path, report.make_record("test", nodeid=f"w{writer}::t{i}", pad="x" * 300))


def test_many_processes_appending_at_once_lose_and_tear_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "report.jsonl")
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_append_many, args=(path, w, 500)) for w in range(6)]
    for p in writers:
        p.start()
    for p in writers:
        p.join()
    contents = report.read_contents(path)
    assert contents.malformed == 0
    assert len({r["nodeid"] for r in contents.records}) == 6 * 500


def test_torn_binary_and_foreign_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "report.jsonl"
    report.append(path, report.make_record("phase", phase="l2", event="start"))
    with path.open("ab") as f:
        f.write(b'{"type": "test", "nodeid": "torn\n')
        f.write(b"\x00\xff\xfe binary\n")
        f.write(b'["a list"]\n')
        f.write(b'{"type": "unknown"}\n')
        f.write(b"\n")
    report.append(path, report.make_record("test", nodeid="t::ok", outcome="passed"))
    contents = report.read_contents(path)
    assert [r["type"] for r in contents.records] == ["phase", "test"]
    assert contents.malformed == 4


def test_records_carry_the_common_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIMPLER_RUN_ID", "run-7")
    monkeypatch.setenv("SIMPLER_PHASE", "retry")
    record = report.make_record("poison_skip", nodeid="a::b")
    assert {k: record[k] for k in ("schema", "run", "phase", "type")} == {
        "schema": 1,
        "run": "run-7",
        "phase": "retry",
        "type": "poison_skip",
    }
    assert json.loads(json.dumps(record)) == record


def test_unknown_record_type_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown record type"):
        report.make_record("gossip")


def test_a_missing_report_is_unreadable_not_empty(tmp_path: Path) -> None:
    with pytest.raises(report.ReportUnreadable, match="cannot read report file"):
        report.read(tmp_path / "absent.jsonl")


def test_report_path_prefers_the_flag_then_the_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SIMPLER_REPORT", raising=False)
    assert report.report_path() == Path(".simpler/report.jsonl")
    monkeypatch.setenv("SIMPLER_REPORT", "/tmp/env.jsonl")
    assert report.report_path() == Path("/tmp/env.jsonl")
    assert report.report_path("flag.jsonl") == Path("flag.jsonl")
