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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = [
    "RECORD_TYPES",
    "ChildRecord",
    "CoverageRecord",
    "DeviceRetiredRecord",
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


@dataclass(frozen=True, slots=True)
class Record:
    """What every record has (docs/design.md, Fields every record has)."""

    raw: Mapping[str, Any]
    type_name: ClassVar[str] = ""

    @property
    def type(self) -> str:
        return text(self.raw, "type")

    @property
    def run(self) -> str:
        return text(self.raw, "run")

    @property
    def phase(self) -> str:
        return text(self.raw, "phase")

    @property
    def ts(self) -> float | None:
        return _float(self.raw, "ts")

    def text(self, key: str) -> str:
        return text(self.raw, key)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.raw)


@dataclass(frozen=True, slots=True)
class PhaseRecord(Record):
    """A phase's start (its plan) or its end (its counts and how it ended)."""

    type_name: ClassVar[str] = "phase"

    @property
    def event(self) -> str:
        return text(self.raw, "event")

    @property
    def is_start(self) -> bool:
        return self.raw.get("event") == "start"

    @property
    def is_end(self) -> bool:
        return self.raw.get("event") == "end"

    @property
    def shard(self) -> str | None:
        return opt_text(self.raw, "shard")

    @property
    def platform(self) -> str:
        return text(self.raw, "platform")

    @property
    def planned(self) -> tuple[str, ...]:
        return _strings(self.raw, "planned")

    @property
    def counts(self) -> dict[str, int]:
        """Outcome to number of test records; anything but a positive count is left out."""
        counts = self.raw.get("counts")
        if not isinstance(counts, dict):
            return {}
        return {str(k): v for k, v in counts.items() if isinstance(v, int) and v > 0}

    @property
    def returncode(self) -> int | None:
        return _int(self.raw, "returncode")

    @property
    def duration_s(self) -> float:
        return _float(self.raw, "duration_s") or 0.0


@dataclass(frozen=True, slots=True)
class TestRecord(Record):
    """One attempt of one test, as the pytest process that ran it (or its controller) saw it."""

    __test__: ClassVar[bool] = False  # a record, not a class pytest should collect
    type_name: ClassVar[str] = "test"

    @property
    def nodeid(self) -> str:
        nodeid = self.raw.get("nodeid")
        return nodeid if isinstance(nodeid, str) else ""

    @property
    def outcome(self) -> str:
        return text(self.raw, "outcome")

    @property
    def attempt(self) -> int | None:
        return _int(self.raw, "attempt")

    @property
    def device(self) -> int | None:
        return _int(self.raw, "device")

    @property
    def worker(self) -> str:
        return text(self.raw, "worker")

    @property
    def poisoned(self) -> bool:
        return bool(self.raw.get("poisoned"))

    @property
    def quarantined(self) -> bool:
        return self.raw.get("quarantined") is True


@dataclass(frozen=True, slots=True)
class PoisonSkipRecord(Record):
    """A test a worker that cannot be healed skipped: the registration the retry re-runs."""

    type_name: ClassVar[str] = "poison_skip"

    @property
    def nodeid(self) -> str:
        nodeid = self.raw.get("nodeid")
        return nodeid if isinstance(nodeid, str) else ""

    @property
    def worker(self) -> str:
        return text(self.raw, "worker")

    @property
    def quarantined(self) -> bool:
        return self.raw.get("quarantined") is True


@dataclass(frozen=True, slots=True)
class ChildRecord(Record):
    """A Resource child (or an isolated unit's process) that ended or never started."""

    type_name: ClassVar[str] = "child"

    @property
    def label(self) -> str:
        return text(self.raw, "label")

    @property
    def nodeid(self) -> str:
        return text(self.raw, "nodeid")

    @property
    def returncode(self) -> int | None:
        return _int(self.raw, "returncode")

    @property
    def failed(self) -> bool:
        # A missing returncode means nobody saw the child exit cleanly: that is not success.
        raw = self.raw
        return raw.get("returncode") != 0 or bool(raw.get("timed_out")) or bool(raw.get("signal"))

    @property
    def quarantined(self) -> bool:
        return self.raw.get("quarantined") is True


@dataclass(frozen=True, slots=True)
class LifecycleRecord(Record):
    """One transition of a pooled worker (recovery/lifecycle.py)."""

    type_name: ClassVar[str] = "lifecycle"

    @property
    def worker(self) -> str:
        return text(self.raw, "worker")

    @property
    def source(self) -> str:
        return text(self.raw, "source")

    @property
    def dest(self) -> str:
        return text(self.raw, "dest")

    @property
    def trigger(self) -> str:
        return text(self.raw, "trigger")

    @property
    def device(self) -> int | None:
        device = self.raw.get("device")
        return None if device is None else int(device)


@dataclass(frozen=True, slots=True)
class DeviceRetiredRecord(Record):
    """Cards retired: taken out of the rest of a run because a worker on them could not be
    reset. Written as ``device_retired``; ``quarantine``, its name in older report files,
    reads the same."""

    type_name: ClassVar[str] = "device_retired"

    @property
    def devices(self) -> tuple[int, ...]:
        return _ints(self.raw, "devices")

    @property
    def reason(self) -> str:
        return text(self.raw, "reason")


@dataclass(frozen=True, slots=True)
class LeftoverRecord(Record):
    """Processes a run's tests left behind, found when the tests were over or on exit."""

    type_name: ClassVar[str] = "leftover"

    @property
    def when(self) -> str:
        return text(self.raw, "when")

    @property
    def processes(self) -> list[dict[str, Any]]:
        """``pid``, ``name``, ``cmdline``, ``test``, ``signal`` of each (a non-dict: left out)."""
        processes = self.raw.get("processes")
        if not isinstance(processes, list):
            return []
        return [process for process in processes if isinstance(process, dict)]


@dataclass(frozen=True, slots=True)
class SessionRecord(Record):
    """How a pytest session ended early: ``-x``/``--maxfail``, or tests the deadline held back."""

    type_name: ClassVar[str] = "session"

    @property
    def stopped(self) -> str:
        return text(self.raw, "stopped")

    @property
    def deadline_held_back(self) -> bool:
        return bool(self.raw.get("deadline_held_back"))


@dataclass(frozen=True, slots=True)
class CoverageRecord(Record):
    """The run's coverage settings (``event: run``), a measured process, or its end."""

    type_name: ClassVar[str] = "coverage"

    @property
    def event(self) -> str:
        return text(self.raw, "event")

    @property
    def label(self) -> str:
        return text(self.raw, "label")

    @property
    def pid(self) -> int | None:
        return _int(self.raw, "pid")


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
