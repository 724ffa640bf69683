"""Records are written as typed records: ``Record.build`` and ``replace`` take documented fields
only, a record's line keeps every field, and no writer in simpler/ makes a record a dict."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from simpler.reporting import record_fields as read
from simpler.reporting import report_file
from simpler.reporting.records import (
    RECORD_TYPES,
    LifecycleRecord,
    Record,
    RecordOrigin,
    TestRecord,
    parse,
)

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("simpler", "recovery")

# A value of each kind of field that reads back as itself (any other kind: text).
SAMPLES: dict[Any, Any] = {
    read.int_: 3, read.float_: 1.5, read.ints: [1, 2], read.opt_strings: ["t.py::b"],
    read.strings: ["t.py::a"], read.flag: True, read.true: True, read.opt_flag: False,
    read.positive_counts: {"passed": 2}, read.kernels: {"k": ["k.cpp"]},
    read.mapping: {"since": "HEAD~1"}, read.list_: [["xml", "c.xml", False]],
    read.processes: [{"pid": 42, "name": "sleep"}],
}  # fmt: skip
COMMON = {"schema", "type", "run", "phase", "ts"}


def every_field(kind: type[Record]) -> dict[str, Any]:
    """A value for every documented field of ``kind`` but the common ones."""
    fields = {}
    for klass in kind.__mro__:
        for name, attr in vars(klass).items():
            if isinstance(attr, read.Field) and name not in COMMON:
                fields[name] = SAMPLES.get(attr._read, f"{name} value")
    return fields


# --- build and replace ---------------------------------------------------------------------


def test_build_fills_the_common_fields_and_takes_documented_ones_only() -> None:
    record = TestRecord.build(run="run-1", phase="l2", nodeid="t.py::a", outcome="passed")
    assert (record.schema, record.type, record.run, record.phase) == (1, "test", "run-1", "l2")
    assert isinstance(record.ts, float) and record.nodeid == "t.py::a"
    with pytest.raises(TypeError, match="test records have no field colour"):
        TestRecord.build(run="run-1", phase="l2", nodeid="t.py::a", colour="red")


def test_replace_sets_documented_fields_only_and_keeps_the_rest() -> None:
    record = LifecycleRecord.build(run="run-1", phase="l2", worker="w", dest="poisoned")
    replaced = record.replace(reason="retired")
    assert replaced.reason == "retired" and replaced.dest == "poisoned"
    assert list(replaced.raw)[-1] == "reason"  # a field set later is written last
    assert record.reason == ""  # records are values: the original is unchanged
    with pytest.raises(TypeError, match="lifecycle records have no field outcome"):
        record.replace(outcome="passed")


def test_an_origin_builds_records_of_its_run_and_phase() -> None:
    record = RecordOrigin("run-2", "retry").build(TestRecord, nodeid="t.py::a")
    assert (record.run, record.phase, record.nodeid) == ("run-2", "retry", "t.py::a")


# --- round trips ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(set(RECORD_TYPES.values()), key=lambda k: k.type_name))
def test_a_built_record_keeps_every_field_through_its_line(
    kind: type[Record], tmp_path: Path
) -> None:
    record = kind.build(run="run-1", phase="l2", **every_field(kind))
    report_file.write_record(tmp_path / "report.jsonl", record)
    (line,) = (tmp_path / "report.jsonl").read_text().splitlines()
    parsed = parse(line)
    assert type(parsed) is kind and parsed.raw == record.raw
    for name in kind.field_names:
        assert getattr(parsed, name) == getattr(record, name), name


def test_an_unknown_field_survives_read_replace_write(tmp_path: Path) -> None:
    path = tmp_path / "report.jsonl"
    line = {"schema": 1, "run": "run-1", "ts": 1.0, "phase": "l2", "type": "test",
            "nodeid": "t.py::a", "outcome": "failed", "added_later": {"k": [1, 2]}}  # fmt: skip
    report_file.append(path, line)
    (read_back,) = report_file.read_records(path).records
    assert isinstance(read_back, TestRecord)
    report_file.write_record(path, read_back.replace(quarantined=True))
    written = report_file.read(path)[-1]
    assert written == {**line, "quarantined": True}


def test_the_write_path_writes_the_records_own_dict(tmp_path: Path) -> None:
    path = tmp_path / "report.jsonl"
    record = TestRecord.build(run="run-1", phase="l2", nodeid="t.py::a", outcome="passed")
    report_file.write_record(path, record)
    assert path.read_text() == json.dumps(dict(record.raw), separators=(",", ":")) + "\n"


# --- no record is born a dict --------------------------------------------------------------

# The calls that write or make a record: a dict literal given to one (or spread into one) is
# a record, or some of one, written as a dict.
WRITERS = {"append", "build", "make_record", "mark", "record", "replace", "write", "write_new",
           "write_record"}  # fmt: skip
USERS_FACE = "make_record"  # report_file.make_record: for users; simpler's own code builds


def record_dicts(source: str) -> list[str]:
    """Where ``source`` writes a record as a dict: a dict literal whose ``type`` names a
    record type; a dict given or spread into a call that writes or makes a record (or into a
    record sink); a function named for a record that returns a dict; a call of the users'
    ``make_record``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict) and _names_a_record_type(node):
            found.append(f"{node.lineno}: a dict literal of a record")
        elif isinstance(node, ast.Call):
            name = _called(node)
            if name == USERS_FACE:
                found.append(f"{node.lineno}: {USERS_FACE}() in simpler's own code")
            if name in WRITERS or "sink" in name:
                given = [*node.args, *(k.value for k in node.keywords if k.arg is None)]
                if any(_dict_in(argument) for argument in given):
                    found.append(f"{node.lineno}: a dict given to {name}()")
        elif isinstance(node, ast.FunctionDef) and "record" in node.name.lower():
            returns = ast.unparse(node.returns) if node.returns is not None else ""
            if returns.split("[")[0].rpartition(".")[2] in ("dict", "Dict", "Mapping"):
                found.append(f"{node.lineno}: {node.name}() returns a dict")
    return found


def _names_a_record_type(node: ast.Dict) -> bool:
    return any(
        isinstance(key, ast.Constant) and key.value == "type"
        and isinstance(value, ast.Constant) and value.value in RECORD_TYPES
        for key, value in zip(node.keys, node.values, strict=True)
    )  # fmt: skip


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _dict_in(expression: ast.expr) -> bool:
    """A dict literal or comprehension, or a choice between such (``{...} if x else {}``)."""
    if isinstance(expression, ast.Dict | ast.DictComp):
        return True
    if isinstance(expression, ast.IfExp):
        return _dict_in(expression.body) or _dict_in(expression.orelse)
    return isinstance(expression, ast.BoolOp) and any(map(_dict_in, expression.values))


def _product_files() -> list[Path]:
    return sorted(path for package in PRODUCT for path in (ROOT / package).rglob("*.py"))


def test_no_writer_in_simpler_makes_a_record_a_dict() -> None:
    users_face = {ROOT / "simpler" / "report.py"}
    found = {
        str(path.relative_to(ROOT)): where
        for path in _product_files()
        if path not in users_face and (where := record_dicts(path.read_text()))
    }
    assert found == {}
    # The users' face is the one function that makes a record a dict.
    face = record_dicts((ROOT / "simpler" / "report.py").read_text())
    assert [line.partition(": ")[2] for line in face] == ["make_record() returns a dict"]


@pytest.mark.parametrize(
    "source",
    [
        'write_record(settings, {"type": "session", "deadline_held_back": 2})',
        'record = {"type": "coverage", "event": "ended", "why": why}',
        "ctx.write(ctx.record(ChildRecord, **{name: fields[name] for name in NAMES}))",
        'self._sink(LifecycleRecord, dest=d, **({"reason": r} if r else {}))',
        "def start_record(self) -> dict[str, Any]:\n    return {}",
        'raw = report_file.make_record("phase", event="start")',
    ],
)
def test_the_scan_finds_a_record_written_as_a_dict(source: str) -> None:
    assert record_dicts(source)


def test_the_scan_leaves_field_values_and_other_dicts_alone() -> None:
    source = (
        'ctx.write(ctx.record(PhaseRecord, event="end", counts={}, affected={"since": "x"}))\n'
        'held = {"worker": w, "runtime": r, "device": d}\n'
        "record = origin.build(TestRecord, **fields)\n"
    )
    assert record_dicts(source) == []
