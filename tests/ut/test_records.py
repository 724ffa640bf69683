"""The report vocabulary: every record type parses to its class and writes back unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from report_records import result

from simpler import report
from simpler.contract import PHASE_ORDER, phase_rank
from simpler.reporting import records, report_file
from simpler.reporting.records import (
    RECORD_TYPES,
    ChildRecord,
    DeviceRetiredRecord,
    LeftoverRecord,
    OtherRecord,
    PhaseRecord,
    PoisonSkipRecord,
    TestRecord,
    from_dict,
    parse,
    parse_all,
)
from simpler.reporting.verdicts import analyze

COMMON = {"schema": 1, "run": "run-1", "ts": 1_700_000_000.5, "phase": "l2"}
# One record of each type with the fields its writer gives it today (docs/design.md,
# Record types), so that a file written before the typed records reads the same.
WRITTEN: dict[str, dict[str, Any]] = {
    "phase": {"event": "end", "counts": {"passed": 2}, "returncode": 0, "duration_s": 1.5,
              "interrupted": None, "error": None, "shard": "job cpu-1", "platform": "a5sim"},
    "test": {"nodeid": "t.py::test_a", "outcome": "failed", "attempt": 1, "runtime": "hbg",
             "device": 0, "worker": "a5sim/hbg/dev0/gw0", "poisoned": True, "message": "boom",
             "tail": "Traceback", "rc": 507046, "where": "aclrtSynchronizeStreamWithTimeout",
             "duration_s": 0.25},
    "child": {"label": "two_cards", "nodeid": "t.py::test_two", "returncode": None,
              "signal": "SIGKILL", "devices": [4, 5], "duration_s": 3.0, "timed_out": True,
              "reached_summary": False, "tail": "", "log": ".simpler/logs/two_cards.log"},
    "lifecycle": {"worker": "a5sim/hbg/dev1/gw1", "runtime": "hbg", "device": 1,
                  "source": "poisoned", "dest": "skipped", "trigger": "give_up", "rc": None,
                  "where": None, "nodeid": "t.py::test_b", "attempt": 1},
    "poison_skip": {"selector": "test_hang", "nodeid": "t.py::test_c", "runtime": "hbg",
                    "worker": "a5sim/hbg/dev1/gw1", "device": 1, "reason": "worker poisoned"},
    "quarantine": {"devices": [1], "reason": "worker could not be reset in L2"},  # old name
    "device_retired": {"devices": [2], "reason": "worker could not be reset in L2"},
    "leftover": {"when": "exit", "processes": [{"pid": 42, "name": "sleep", "test": None}]},
    "session": {"stopped": "Interrupted: stopping after 1 failures", "collected": 5,
                "finished": 2},
    "coverage": {"event": "process", "label": "L2 pass", "pid": 7, "data_file": "x"},
}  # fmt: skip


def written(kind: str, **more: Any) -> dict[str, Any]:
    return {**COMMON, "type": kind, **WRITTEN[kind], **more}


def test_every_record_type_is_known_and_has_a_written_example() -> None:
    assert set(RECORD_TYPES) == set(WRITTEN)
    assert tuple(RECORD_TYPES) == report_file.RECORD_TYPES


@pytest.mark.parametrize("kind", list(WRITTEN))
def test_each_type_parses_to_its_class_and_writes_back_the_same_dict(kind: str) -> None:
    raw = written(kind)
    record = parse(json.dumps(raw))
    assert type(record) is RECORD_TYPES[kind]
    assert record.type == kind and record.run == "run-1" and record.phase == "l2"
    assert record.to_dict() == raw
    assert parse(json.dumps(record.to_dict())) == record


def test_a_field_this_version_does_not_know_survives_a_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "report.jsonl"
    report_file.write_record(path, from_dict(written("test", added_later={"k": [1, 2]})))
    (record,) = report_file.read_records(path).records
    assert record.raw["added_later"] == {"k": [1, 2]}
    assert report.read(path) == [written("test", added_later={"k": [1, 2]})]


def test_an_unknown_type_is_kept_whole_by_the_records_and_skipped_by_the_file_reader(
    tmp_path: Path,
) -> None:
    future = {**COMMON, "type": "device_weather", "temperature": 71}
    (record,) = parse_all([json.dumps(future)])
    assert isinstance(record, OtherRecord) and record.to_dict() == future
    path = tmp_path / "report.jsonl"
    path.write_text(json.dumps(future) + "\n" + json.dumps(written("quarantine")) + "\n")
    contents = report_file.read_records(path)
    assert [type(r) for r in contents.records] == [DeviceRetiredRecord]
    assert contents.malformed == 1  # docs/design.md: an unknown type is skipped and counted


def test_lines_that_hold_no_record_parse_to_nothing_and_odd_types_to_other() -> None:
    assert parse_all(['{"type": "test", "nodeid": "torn', "[1, 2]", "not json", ""]) == []
    assert isinstance(parse('{"type": ["test"]}'), OtherRecord)
    assert isinstance(parse('{"no_type": 1}'), OtherRecord)


def test_an_old_report_file_reads_as_it_did(tmp_path: Path) -> None:
    path = tmp_path / "report.jsonl"
    lines = [json.dumps(written(kind), separators=(",", ":")) for kind in WRITTEN]
    path.write_text("\n".join(lines) + "\n")
    assert report.read(path) == [json.loads(line) for line in lines]
    typed = report_file.read_records(path).records
    assert [r.type for r in typed] == list(WRITTEN)
    phase, test, child, _, poison, quarantine, retired, leftover, *_ = typed
    assert isinstance(phase, PhaseRecord) and phase.is_end and phase.counts == {"passed": 2}
    assert phase.shard == "job cpu-1" and phase.returncode == 0 and phase.duration_s == 1.5
    assert isinstance(test, TestRecord) and test.nodeid == "t.py::test_a" and test.poisoned
    assert test.outcome == "failed" and test.device == 0 and not test.quarantined
    assert isinstance(child, ChildRecord) and child.failed and child.returncode is None
    assert isinstance(poison, PoisonSkipRecord) and poison.worker == "a5sim/hbg/dev1/gw1"
    # A file written before "retired" was the word: its quarantine record reads the same.
    assert isinstance(quarantine, DeviceRetiredRecord) and quarantine.devices == (1,)
    assert isinstance(retired, DeviceRetiredRecord) and retired.devices == (2,)
    assert isinstance(leftover, LeftoverRecord) and leftover.processes[0]["pid"] == 42


def test_optional_text_reads_empty_for_null_and_text_for_anything_else() -> None:
    record = from_dict({"type": "test", "message": None, "rc": 507046})
    assert record.text("message") == "" and record.text("absent") == ""
    assert record.text("rc") == "507046"
    assert records.opt_text(record.raw, "message") is None
    assert records.opt_text(record.raw, "rc") == "507046"


def test_a_field_read_on_its_class_is_the_field_named_as_in_the_file() -> None:
    assert TestRecord.duration_s.key == "duration_s" and PhaseRecord.event.key == "event"
    assert {TestRecord.nodeid.key, TestRecord.crashed.key} <= TestRecord.field_names


def test_fields_whose_absence_says_something_read_as_none_when_absent() -> None:
    test, child, phase = (from_dict({"type": kind}) for kind in ("test", "child", "phase"))
    assert isinstance(test, TestRecord) and isinstance(child, ChildRecord)
    assert isinstance(phase, PhaseRecord)
    assert (test.duration_s, child.duration_s, phase.planned, phase.platform) == (None,) * 4
    planned = from_dict({"type": "phase", "planned": [], "duration_s": 0})
    assert isinstance(planned, PhaseRecord) and planned.planned == ()  # an empty plan is one


def test_fields_of_the_wrong_kind_read_as_absent() -> None:
    test = from_dict({"type": "test", "nodeid": 5, "attempt": True, "device": "0"})
    assert isinstance(test, TestRecord)
    assert (test.nodeid, test.attempt, test.device) == ("", None, None)
    phase = from_dict({"type": "phase", "counts": {"passed": "2", "failed": 1}})
    assert isinstance(phase, PhaseRecord) and phase.counts == {"failed": 1}


def test_phases_rank_in_run_order_and_an_unknown_phase_ranks_first() -> None:
    assert [phase_rank(p) for p in PHASE_ORDER] == [0, 1, 2, 3]
    assert phase_rank("nightly") == -1 and phase_rank("") == -1
    assert sorted(["retry", "nightly", "report", "l2", "resource"], key=phase_rank) == [
        "nightly", "l2", "resource", "retry", "report",
    ]  # fmt: skip


def test_the_summary_accounts_phases_in_the_one_phase_order_an_unknown_one_first() -> None:
    lines = [result("t::a", "passed", phase=p) for p in ("retry", "custom", "l2", "resource")]
    assert [phase.name for phase in analyze(lines).phases] == ["custom", *PHASE_ORDER[:-1]]
