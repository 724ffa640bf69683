"""The report file's vocabulary: one typed record class per record type (docs/design.md,
The report file), and the one place a line becomes a record and a record a line.

A record is a frozen view of the dict it was read from: ``raw`` keeps the whole dict, so an
unknown field survives a round trip; each documented field is a typed property, read on
access, and a field of an unexpected type reads as absent.
"""

from __future__ import annotations

import builtins
import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from simpler.reporting import record_fields as read
from simpler.reporting.record_fields import Field, opt_text, text

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
    "RecordOrigin",
    "SessionRecord",
    "TestRecord",
    "common_fields",
    "from_dict",
    "opt_text",
    "parse",
    "parse_all",
    "text",
]


R = TypeVar("R", bound="Record")
SCHEMA = 1  # the report file's schema: every record's ``schema``


def common_fields(type_name: str, run: str, phase: str) -> dict[str, Any]:
    """The fields every record has (docs/design.md, Fields every record has), written now."""
    return {"schema": SCHEMA, "run": run, "ts": time.time(), "phase": phase, "type": type_name}


@dataclass(frozen=True, slots=True)
class Record:
    """What every record has (docs/design.md, Fields every record has)."""

    raw: Mapping[str, Any]
    type_name: ClassVar[str] = ""
    field_names: ClassVar[frozenset[str]] = frozenset()  # every documented field of the type

    schema = Field(read.int_)
    type = Field(read.text)
    run = Field(read.str_only)
    phase = Field(read.str_only)
    ts = Field(read.float_)

    def __init_subclass__(cls) -> None:
        # (no zero-argument super() here: slots=True dataclasses are recreated classes)
        cls.field_names = frozenset(
            name for klass in cls.__mro__ for name, attr in vars(klass).items()
            if isinstance(attr, Field)
        )  # fmt: skip

    @classmethod
    def build(cls: builtins.type[R], *, run: str, phase: str, **values: Any) -> R:
        """A new record of this type, as a writer makes it: the common fields filled in, and
        only documented fields (a name the type does not have is a TypeError, so a writer
        cannot write a field no reader knows). ``ts`` defaults to now."""
        cls._refuse_undocumented(values)
        return cls({**common_fields(cls.type_name, run, phase), **values})

    def replace(self: R, **values: Any) -> R:
        """This record with ``values`` set (documented fields only, as in ``build``)."""
        self._refuse_undocumented(values)
        return builtins.type(self)({**self.raw, **values})

    @classmethod
    def _refuse_undocumented(cls, values: Mapping[str, Any]) -> None:
        unknown = values.keys() - cls.field_names
        if unknown:
            raise TypeError(f"{cls.type_name} records have no field {', '.join(sorted(unknown))}")

    def text(self, key: str) -> str:
        return read.text(self.raw, key)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.raw)


@dataclass(frozen=True, slots=True)
class RecordOrigin:
    """The run and phase a writer's records belong to: what every record it builds names."""

    run: str
    phase: str

    def build(self, kind: builtins.type[R], **values: Any) -> R:
        """A new record of ``kind`` from this writer (``Record.build``)."""
        return kind.build(run=self.run, phase=self.phase, **values)


@dataclass(frozen=True, slots=True)
class PhaseRecord(Record):
    """A phase's start (the tests it plans) or its end (its counts and how it ended)."""

    type_name: ClassVar[str] = "phase"
    event = Field(read.text)
    # start
    shard = Field(read.opt_text)
    platform = Field(read.opt_text)
    planned = Field(read.opt_strings)  # None: no plan written (an empty plan is a plan)
    no_device = Field(read.strings)  # L2: the planned tests that use no device
    selected = Field(read.int_)  # the size of the whole selection
    affected = Field(read.mapping)  # --affected-since: the decision (reporting/affected_block.py)
    # end
    counts = Field(read.positive_counts)
    returncode = Field(read.int_)
    duration_s = Field(read.float_)  # None: not said
    interrupted = Field(read.opt_text)  # the signal's name
    error = Field(read.opt_text)  # a failure inside simpler
    deadline = Field(read.opt_text)  # the reason when the deadline cut the phase
    children = Field(read.text)  # how its children started
    not_started = Field(read.text)  # why a test phase never ran
    slots = Field(read.int_)  # the processes the phase could keep busy at once (-j)
    devices = Field(read.ints)  # the devices its tests used

    @property
    def is_start(self) -> bool:
        return self.event == "start"

    @property
    def is_end(self) -> bool:
        return self.event == "end"


@dataclass(frozen=True, slots=True)
class TestRecord(Record):
    """One attempt of one test, as the pytest process that ran it (or its controller) saw it."""

    __test__: ClassVar[bool] = False  # a record, not a class pytest should collect
    type_name: ClassVar[str] = "test"
    nodeid = Field(read.str_only)
    outcome = Field(read.text)
    attempt = Field(read.int_)
    runtime = Field(read.text)
    device = Field(read.int_)
    worker = Field(read.text)
    poisoned = Field(read.flag)
    message = Field(read.text)
    tail = Field(read.text)  # the last lines of the failure
    rc = Field(read.int_)  # of a device error
    where = Field(read.opt_text)  # of a device error
    # the process that ran it (None: its controller wrote it after a crash)
    pid = Field(read.int_)
    duration_s = Field(read.float_)  # None: not said
    crashed = Field(read.str_only)  # the test its xdist worker crashed under ("": none did)
    kernels = Field(read.kernels)  # each kernel it launched, with the sources it was built from
    quarantined = Field(read.true)
    quarantine_expired = Field(read.opt_text)  # the date a quarantine entry of the test ran out


@dataclass(frozen=True, slots=True)
class PoisonSkipRecord(Record):
    """A test a worker that cannot be healed skipped: the registration the retry re-runs."""

    type_name: ClassVar[str] = "poison_skip"
    selector = Field(read.text)
    nodeid = Field(read.str_only)
    runtime = Field(read.opt_text)
    worker = Field(read.text)
    device = Field(read.int_)  # the device of its worker (None: an older report)
    reason = Field(read.text)
    quarantined = Field(read.true)
    quarantine_expired = Field(read.opt_text)


@dataclass(frozen=True, slots=True)
class ChildRecord(Record):
    """A Resource child (or an isolated unit's process) that ended or never started."""

    type_name: ClassVar[str] = "child"
    label = Field(read.text)
    nodeid = Field(read.text)  # "" for an isolated unit (null in the file)
    returncode = Field(read.int_)  # None: killed by a signal, or never seen to exit
    signal = Field(read.opt_text)
    devices = Field(read.ints)
    duration_s = Field(read.float_)  # None: not said
    timed_out = Field(read.flag)
    reached_summary = Field(read.opt_flag)  # False: it died before pytest's summary line
    tail = Field(read.text)
    log = Field(read.text)  # the path of its full output
    not_run = Field(read.text)  # why it never started
    isolated = Field(read.flag)
    quarantined = Field(read.true)
    quarantine_expired = Field(read.opt_text)

    @property
    def failed(self) -> bool:
        # A missing returncode means nobody saw the child exit cleanly: that is not success.
        return self.returncode != 0 or self.timed_out or bool(self.signal)


@dataclass(frozen=True, slots=True)
class LifecycleRecord(Record):
    """One transition of a pooled worker (recovery/lifecycle.py)."""

    type_name: ClassVar[str] = "lifecycle"
    worker = Field(read.text)
    runtime = Field(read.text)
    device = Field(read.int_)
    source = Field(read.text)
    dest = Field(read.text)
    trigger = Field(read.text)
    rc = Field(read.int_)
    where = Field(read.opt_text)
    nodeid = Field(read.text)  # the test it happened at
    attempt = Field(read.int_)
    reason = Field(read.text)


@dataclass(frozen=True, slots=True)
class DeviceRetiredRecord(Record):
    """Cards retired: taken out of the rest of a run because a worker on them could not be
    reset. Written as ``device_retired``; ``quarantine``, its name in older report files,
    reads the same."""

    type_name: ClassVar[str] = "device_retired"
    devices = Field(read.ints)
    reason = Field(read.text)


@dataclass(frozen=True, slots=True)
class LeftoverRecord(Record):
    """Processes a run's tests left behind, found when the tests were over or on exit."""

    type_name: ClassVar[str] = "leftover"
    when = Field(read.text)
    processes = Field(read.processes)


@dataclass(frozen=True, slots=True)
class SessionRecord(Record):
    """How a pytest session ended early: ``-x``/``--maxfail``, or tests the deadline held back."""

    type_name: ClassVar[str] = "session"
    stopped = Field(read.text)
    collected = Field(read.int_)
    finished = Field(read.int_)
    deadline_held_back = Field(read.flag)


@dataclass(frozen=True, slots=True)
class CoverageRecord(Record):
    """The run's coverage settings (``event: run``), a measured process, or its end."""

    type_name: ClassVar[str] = "coverage"
    event = Field(read.text)
    # run
    root = Field(read.text)
    data_dir = Field(read.text)  # relative to the report's folder
    sources = Field(read.strings)
    reports = Field(read.list_)
    context = Field(read.opt_text)
    fail_under = Field(read.float_)
    config = Field(read.opt_text)
    branch = Field(read.true)
    # process, ended
    label = Field(read.text)
    pid = Field(read.int_)
    data_file = Field(read.text)
    why = Field(read.opt_text)  # ended: null when it ended by itself


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
