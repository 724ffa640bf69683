"""The report file's vocabulary: one typed record class per record type (docs/design.md,
The report file), and the one place a line becomes a record and a record a line.

A record is a frozen view of the dict it was read from: ``raw`` keeps the whole dict, so a
field this version does not know survives a round trip, and each documented field is a
typed property read from it. Reading fields on access keeps a large report cheap to parse
(one small object per line), and a field of an unexpected type reads as absent instead of
failing the read: a report file is written by many processes and versions.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

__all__ = [
    "RECORD_TYPES",
    "ChildRecord",
    "CoverageRecord",
    "DeviceRetiredRecord",
    "Field",
    "LeftoverRecord",
    "LifecycleRecord",
    "OtherRecord",
    "PhaseRecord",
    "PoisonSkipRecord",
    "Record",
    "SessionRecord",
    "TestRecord",
    "from_dict",
    "opt_text",
    "parse",
    "parse_all",
    "text",
]


T = TypeVar("T")


def text(raw: Mapping[str, Any], key: str) -> str:
    """An optional text field: ``""`` when absent or null, else the value as text."""
    value = raw.get(key)
    return "" if value is None else str(value)


def opt_text(raw: Mapping[str, Any], key: str) -> str | None:
    """An optional text field where null means something (a test never run, no signal)."""
    value = raw.get(key)
    return None if value is None else str(value)


def _int(raw: Mapping[str, Any], key: str) -> int | None:
    value = raw.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(raw: Mapping[str, Any], key: str) -> float | None:
    value = raw.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _ints(raw: Mapping[str, Any], key: str) -> tuple[int, ...]:
    value = raw.get(key)
    if not isinstance(value, list | tuple):
        return ()
    return tuple(v for v in value if isinstance(v, int) and not isinstance(v, bool))


def _strings(raw: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = raw.get(key)
    if not isinstance(value, list | tuple):
        return ()
    return tuple(v for v in value if isinstance(v, str))


class Field(Generic[T]):
    """A typed field of a record, read from its ``raw`` dict on access by ``read``: the
    record types below are lists of their fields, one line each."""

    def __init__(self, read: Callable[[Mapping[str, Any], str], T]) -> None:
        self._read = read
        self._key = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._key = name  # each attribute is named as the record's field is

    def __get__(self, record: Record, owner: type | None = None) -> T:
        return self._read(record.raw, self._key)


def _str_only(raw: Mapping[str, Any], key: str) -> str:
    value = raw.get(key)
    return value if isinstance(value, str) else ""


def _flag(raw: Mapping[str, Any], key: str) -> bool:
    return bool(raw.get(key))


def _true(raw: Mapping[str, Any], key: str) -> bool:
    """Only a JSON ``true``: a test quarantine mark is never guessed from another value."""
    return raw.get(key) is True


def _duration(raw: Mapping[str, Any], key: str) -> float:
    return _float(raw, key) or 0.0


def _device(raw: Mapping[str, Any], key: str) -> int | None:
    device = raw.get(key)
    return None if device is None else int(device)


def _positive_counts(raw: Mapping[str, Any], key: str) -> dict[str, int]:
    """Outcome to number of test records; anything but a positive count is left out."""
    counts = raw.get(key)
    if not isinstance(counts, dict):
        return {}
    return {str(k): v for k, v in counts.items() if isinstance(v, int) and v > 0}


def _kernels(raw: Mapping[str, Any], key: str) -> dict[str, tuple[str, ...]]:
    """``{kernel: [source, ...]}``; what is not that shape reads as no kernel."""
    value = raw.get(key)
    if not isinstance(value, dict):
        return {}
    return {
        str(name): tuple(s for s in sources if isinstance(s, str))
        for name, sources in value.items()
        if isinstance(sources, list)
    }


def _processes(raw: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    """``pid``, ``name``, ``cmdline``, ``test``, ``signal`` of each (a non-dict: left out)."""
    processes = raw.get(key)
    if not isinstance(processes, list):
        return []
    return [process for process in processes if isinstance(process, dict)]


@dataclass(frozen=True, slots=True)
class Record:
    """What every record has (docs/design.md, Fields every record has)."""

    raw: Mapping[str, Any]
    type_name: ClassVar[str] = ""

    type = Field(text)
    run = Field(text)
    phase = Field(text)
    ts = Field(_float)

    def text(self, key: str) -> str:
        return text(self.raw, key)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.raw)


@dataclass(frozen=True, slots=True)
class PhaseRecord(Record):
    """A phase's start (its plan) or its end (its counts and how it ended)."""

    type_name: ClassVar[str] = "phase"
    event = Field(text)
    shard = Field(opt_text)
    platform = Field(text)
    planned = Field(_strings)
    counts = Field(_positive_counts)
    returncode = Field(_int)
    duration_s = Field(_duration)
    slots = Field(_int)  # end: the processes the phase could keep busy at once (-j)
    devices = Field(_ints)  # end: the devices its tests used

    @property
    def is_start(self) -> bool:
        return self.raw.get("event") == "start"

    @property
    def is_end(self) -> bool:
        return self.raw.get("event") == "end"


@dataclass(frozen=True, slots=True)
class TestRecord(Record):
    """One attempt of one test, as the pytest process that ran it (or its controller) saw it."""

    __test__: ClassVar[bool] = False  # a record, not a class pytest should collect
    type_name: ClassVar[str] = "test"
    nodeid = Field(_str_only)
    outcome = Field(text)
    attempt = Field(_int)
    device = Field(_int)
    worker = Field(text)
    poisoned = Field(_flag)
    quarantined = Field(_true)
    pid = Field(_int)  # the process that ran it (None: its controller wrote it after a crash)
    duration_s = Field(_duration)
    kernels = Field(_kernels)  # each kernel it launched, with the sources it was built from


@dataclass(frozen=True, slots=True)
class PoisonSkipRecord(Record):
    """A test a worker that cannot be healed skipped: the registration the retry re-runs."""

    type_name: ClassVar[str] = "poison_skip"
    nodeid = Field(_str_only)
    worker = Field(text)
    quarantined = Field(_true)


@dataclass(frozen=True, slots=True)
class ChildRecord(Record):
    """A Resource child (or an isolated unit's process) that ended or never started."""

    type_name: ClassVar[str] = "child"
    label = Field(text)
    nodeid = Field(text)
    returncode = Field(_int)
    quarantined = Field(_true)
    devices = Field(_ints)

    @property
    def failed(self) -> bool:
        # A missing returncode means nobody saw the child exit cleanly: that is not success.
        raw = self.raw
        return raw.get("returncode") != 0 or bool(raw.get("timed_out")) or bool(raw.get("signal"))


@dataclass(frozen=True, slots=True)
class LifecycleRecord(Record):
    """One transition of a pooled worker (recovery/lifecycle.py)."""

    type_name: ClassVar[str] = "lifecycle"
    worker = Field(text)
    source = Field(text)
    dest = Field(text)
    trigger = Field(text)
    device = Field(_device)


@dataclass(frozen=True, slots=True)
class DeviceRetiredRecord(Record):
    """Cards retired: taken out of the rest of a run because a worker on them could not be
    reset. Written as ``device_retired``; ``quarantine``, its name in older report files,
    reads the same."""

    type_name: ClassVar[str] = "device_retired"
    devices = Field(_ints)
    reason = Field(text)


@dataclass(frozen=True, slots=True)
class LeftoverRecord(Record):
    """Processes a run's tests left behind, found when the tests were over or on exit."""

    type_name: ClassVar[str] = "leftover"
    when = Field(text)
    processes = Field(_processes)


@dataclass(frozen=True, slots=True)
class SessionRecord(Record):
    """How a pytest session ended early: ``-x``/``--maxfail``, or tests the deadline held back."""

    type_name: ClassVar[str] = "session"
    stopped = Field(text)
    deadline_held_back = Field(_flag)


@dataclass(frozen=True, slots=True)
class CoverageRecord(Record):
    """The run's coverage settings (``event: run``), a measured process, or its end."""

    type_name: ClassVar[str] = "coverage"
    event = Field(text)
    label = Field(text)
    pid = Field(_int)


@dataclass(frozen=True, slots=True)
class OtherRecord(Record):
    """A record of a type this version does not know: kept whole, read by nobody."""


# Type name to class: the known record types, in the order docs/design.md lists them, and
# the old names a type was written under that still read as it.
RECORD_TYPES: dict[str, type[Record]] = {
    cls.type_name: cls
    for cls in (
        PhaseRecord,
        TestRecord,
        ChildRecord,
        LifecycleRecord,
        PoisonSkipRecord,
        DeviceRetiredRecord,
        LeftoverRecord,
        SessionRecord,
        CoverageRecord,
    )
}
RECORD_TYPES["quarantine"] = DeviceRetiredRecord  # before 'retired' was the word


def from_dict(raw: Mapping[str, Any]) -> Record:
    """The typed record of a dict read from a line; an unknown ``type`` is an OtherRecord."""
    kind = raw.get("type")
    return (RECORD_TYPES.get(kind, OtherRecord) if isinstance(kind, str) else OtherRecord)(raw)


def parse(line: str) -> Record | None:
    """The record on one line, or None for a torn, binary or non-object line."""
    if not line.isascii():
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:  # a byte that was not UTF-8: a binary or torn line
            return None
    try:
        raw = json.loads(line)
    except ValueError:
        return None
    return from_dict(raw) if isinstance(raw, dict) else None


def parse_all(lines: Iterable[str]) -> list[Record]:
    """The records of ``lines`` that parse, unknown types included, in order."""
    return [record for record in map(parse, lines) if record is not None]
