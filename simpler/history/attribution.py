"""Why each attempt of a run failed: the test itself, the device, or the infrastructure.

Pure computation over one run's records, in file order. The rules (docs/history.md, attribution):
- ``device``: the attempt ran on a pooled worker that *another* test poisoned (the lifecycle
  records say who: a move into ``poisoned`` names its test, a move into ``healthy``,
  ``rebuilt``, ``closed`` or ``created`` clears it); it was poison-skipped; its card was
  retired before it was placed (a Resource child the scheduler could not place); or its
  xdist worker crashed while another test ran (the records of the tests the crash left
  unrun), or its fresh process found no usable device;
- ``infra``: a Resource child that never started for a reason not its own (the session
  timeout, ``-x``, a signal to simpler) or that was killed by one; and every failure of a run
  whose report is incomplete (``complete=False``);
- ``test``: any other failure. The trigger of a device fault fails its own attempt: that
  failure counts against the trigger.
Each run's records of one source (one report file) go through one :class:`RunAttribution`:
a worker key's lifecycle only means something within the file of the machine it ran on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any, NamedTuple

from simpler.contract import GREEN_OUTCOMES, RETIRED_NOT_RUN
from simpler.reporting import records as kinds
from simpler.reporting.verdicts import POISON_SKIPPED, RecordStanding, standing_of, supersedes

__all__ = [
    "DEVICE", "INFRA", "MESSAGE_CHARS", "TEST", "Attempt", "RunAttribution", "attribute",
    "merge_attempts",
]  # fmt: skip

TEST, DEVICE, INFRA = "test", "device", "infra"
MESSAGE_CHARS = 500
# Lifecycle states in which a worker no longer carries an earlier test's fault.
_CLEARED = frozenset({"healthy", "rebuilt", "closed", "created"})
_DEVICE_IN_WORKER = re.compile(r"/dev(\d+)/")
_GREEN = frozenset(GREEN_OUTCOMES)
_CRASHED_WHILE = " crashed while running "  # crash_watch: "worker gw0 crashed while running X"
# Every field of a test record the attempt keeps, as simpler writes them (test_records.py).
_TEST_FIELD_NAMES = (
    "nodeid", "phase", "attempt", "outcome", "duration_s", "device", "runtime", "ts", "rc",
    "where", "message",
)  # fmt: skip
_TEST_FIELDS = itemgetter(*_TEST_FIELD_NAMES)

Record = Mapping[str, Any]


class Attempt(NamedTuple):
    """One row of the ``attempts`` table: the columns every attempt fills first, those a
    passing attempt leaves empty last (the importer writes those rows without them)."""

    run_id: str
    nodeid: str
    attempt: int
    phase: str
    outcome: str
    duration_s: float | None
    device: int | None
    runtime: str | None
    quarantined: int
    ts: float | None
    rc: int | None
    where: str | None
    cause: str | None  # own_cause, or infra when the run's report is incomplete
    own_cause: str | None  # the cause had the run been complete; None: it did not fail
    message: str | None
    label: str | None


_new = tuple.__new__  # builds an Attempt without NamedTuple's keyword-handling constructor


def attribute(run_id: str, parts: Iterable[Sequence[Record]], *, complete: bool) -> list[Attempt]:
    """The attempts of one run: ``parts`` are its records per source, each in file order."""
    attributed = []
    for part_records in parts:
        part = RunAttribution(run_id)
        for record in part_records:
            part.feed(record)
        attributed.append(part.attempts(complete=complete))
    return merge_attempts(attributed)


def merge_attempts(parts: Iterable[Iterable[Attempt]]) -> list[Attempt]:
    """One attempt per key across sources, chosen by the verdict rule (``supersedes``), as
    the importer stores them: sources merge in any order."""
    merged: dict[tuple[str, str, int], Attempt] = {}
    for attempts in parts:
        for row in attempts:
            key = (row.nodeid, row.phase, row.attempt)
            held = merged.get(key)
            if held is None or supersedes(row, held):
                merged[key] = row
    return list(merged.values())


class RunAttribution:
    """The attempts of one run in one source, fed its records in file order."""

    __slots__ = (
        "_children", "_gave_up", "_interrupted", "_max_attempt", "_pending", "_poisoned_by",
        "_retired", "_rows", "_timed_out_phases", "run_id",
    )  # fmt: skip

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self._rows: dict[tuple[str, str, int], Attempt] = {}
        self._poisoned_by: dict[str, str] = {}  # worker key -> the test that poisoned it
        self._gave_up: dict[int, set[str]] = {}  # device -> tests whose fault made it unusable
        self._retired: dict[str, set[int]] = {}  # phase -> devices retired in it so far
        self._pending: dict[tuple[str, str], kinds.PoisonSkipRecord] = {}  # by (phase, nodeid)
        self._children: dict[tuple[str, str], tuple[Record, str]] = {}  # (phase, id) -> cause
        self._timed_out_phases: set[str] = set()  # the scheduler stopped on the session timeout
        self._interrupted: set[str] = set()  # phases a signal to simpler stopped
        self._max_attempt = 1  # attempts are looked up by number, not by scanning every row

    def feed(self, record: Record) -> None:
        typed = kinds.from_dict(record)
        if isinstance(typed, kinds.TestRecord):
            self.test(record)
        else:
            self.other(typed)

    def test(self, record: Record) -> None:
        """A ``test`` record: the hot path (a million of them in a long history), where a
        passing record costs one multi-key lookup, a few type checks and one tuple."""
        try:
            nodeid, phase, attempt, outcome, duration, device, runtime, ts, rc, where, message = (
                _TEST_FIELDS(record)
            )
        except KeyError:  # a record of another version, short of a field: slower, same rules
            nodeid, phase, attempt, outcome, duration, device, runtime, ts, rc, where, message = (
                map(record.get, _TEST_FIELD_NAMES)
            )
        if type(nodeid) is not str or not nodeid:
            return
        if type(phase) is not str:
            phase = ""
        if type(attempt) is not int:
            attempt = 1
        elif attempt > self._max_attempt:
            self._max_attempt = attempt
        if type(outcome) is not str or not outcome:
            outcome = "unknown"  # a verdict nobody can read must not pass for green
        ts = ts if type(ts) is float or type(ts) is int else None
        registration = self._pending.pop((phase, nodeid), None) if self._pending else None
        # A record after its registration is that poison-skip's, unless the rule prefers it.
        if registration is not None and not supersedes(
            RecordStanding(phase, ts, attempt, outcome), standing_of(registration)
        ):
            outcome = POISON_SKIPPED
        cause = None
        if outcome not in _GREEN:
            cause = self._cause_of_failed_test(record, nodeid, phase, outcome)
        row = _new(
            Attempt,
            (
                self.run_id,
                nodeid,
                attempt,
                phase,
                outcome,
                duration if type(duration) is float or type(duration) is int else None,
                device if type(device) is int else None,
                runtime if type(runtime) is str else None,
                1 if record.get("quarantined") is True else 0,
                ts,
                rc if type(rc) is int else None,
                where if type(where) is str else None,
                cause,
                cause,
                message[:MESSAGE_CHARS] if type(message) is str and message else None,
                None,
            ),
        )
        key = (nodeid, phase, attempt)
        held = self._rows.setdefault(key, row)  # one lookup for an attempt's first record
        if held is not row and supersedes(row, held):
            self._rows[key] = row

    def other(self, typed: kinds.Record) -> None:
        """Any record but a test's: what the attribution of later test records depends on."""
        record = typed.raw
        if isinstance(typed, kinds.LifecycleRecord):
            self._lifecycle(record)
        elif isinstance(typed, kinds.PoisonSkipRecord) and typed.nodeid:
            self._pending[(_text(record.get("phase")), typed.nodeid)] = typed
        elif isinstance(typed, kinds.ChildRecord):
            self._child(record)
        elif isinstance(typed, kinds.DeviceRetiredRecord):
            devices = self._retired.setdefault(_text(record.get("phase")), set())
            devices.update(_devices(record.get("devices")))
        elif isinstance(typed, kinds.PhaseRecord) and typed.is_end and record.get("interrupted"):
            self._interrupted.add(_text(record.get("phase")))

    def attempts(self, *, complete: bool) -> list[Attempt]:
        """Every attempt of the part; a failure's cause is ``infra`` unless ``complete``."""
        self._registrations_without_a_test()
        self._children_without_a_test()
        rows = list(self._rows.values())
        if complete:
            return rows
        return [row if row.own_cause is None else row._replace(cause=INFRA) for row in rows]

    # -- lifecycle and device state ------------------------------------------------------

    def _lifecycle(self, record: Record) -> None:
        worker = record.get("worker")
        if not isinstance(worker, str):
            return
        dest = record.get("dest")
        if dest == "poisoned":
            if record.get("source") != "poisoned" or worker not in self._poisoned_by:
                self._poisoned_by[worker] = _text(record.get("nodeid"))
        elif dest in _CLEARED:
            self._poisoned_by.pop(worker, None)
        elif dest == "skipped" and record.get("trigger") != "process_must_end":
            # Given up on (queries.py: retired_devices): whoever poisoned it owns that.
            device = record.get("device")
            if type(device) is int:
                self._gave_up.setdefault(device, set()).add(_text(record.get("nodeid")))

    def _on_retired_card(self, phase: str, devices: Iterable[int], nodeid: str) -> bool:
        retired = self._retired.get(phase)
        if not retired:
            return False
        return any(d in retired and nodeid not in self._gave_up.get(d, ()) for d in devices)

    def _cause_of_failed_test(self, record: Record, nodeid: str, phase: str, outcome: str) -> str:
        if outcome == POISON_SKIPPED:
            return DEVICE
        message = record.get("message")
        if isinstance(message, str) and _lost_to_another_test(message, nodeid):
            return DEVICE
        worker = record.get("worker")
        if isinstance(worker, str):
            poisoner = self._poisoned_by.get(worker)
            # An unnamed poisoner is another test unless this one says it poisoned the worker.
            if (
                poisoner is not None
                and poisoner != nodeid
                and (poisoner or not record.get("poisoned"))
            ):
                return DEVICE
        device = record.get("device")
        if type(device) is int and self._on_retired_card(phase, (device,), nodeid):
            return DEVICE
        return TEST

    # -- Resource children -----------------------------------------------------------------

    def _child(self, record: Record) -> None:
        phase = _text(record.get("phase"))
        name = _child_name(record)
        if not name:
            return
        not_run = record.get("not_run")
        if not_run:
            reason = str(not_run)
            if "session_timeout" in reason:
                self._timed_out_phases.add(phase)
            # Too few cards left that are not retired (older reports: "outside quarantine"): the
            # device's doing; any other reason (-x, a signal to simpler) is the run's.
            cause = DEVICE if RETIRED_NOT_RUN in reason or "quarantine" in reason else INFRA
        elif phase in self._timed_out_phases and _killed(record):
            cause = INFRA  # stopped with every running child when the session timed out
        elif self._on_retired_card(phase, _devices(record.get("devices")), name):
            cause = DEVICE
        else:
            cause = TEST
        self._children[(phase, name)] = (record, cause)

    def _children_without_a_test(self) -> None:
        """A failed child whose test left no record (it never started, was killed, or died
        before pytest reported) stands for the test; every child names its test's label."""
        for (phase, name), (child, cause) in self._children.items():
            label = child.get("label")
            label = label if isinstance(label, str) else None
            tested = False
            # A child of one test: it cost the run the child's wall, as learned durations say.
            wall = _number(child.get("duration_s")) if child.get("nodeid") == name else None
            for attempt in range(1, self._max_attempt + 1):
                if (row := self._rows.get((name, phase, attempt))) is not None:
                    tested, took = True, row.duration_s if wall is None else wall
                    self._rows[(name, phase, attempt)] = row._replace(label=label, duration_s=took)
            if tested or not _child_failed(child):
                continue
            if cause == TEST and phase in self._interrupted and _killed(child):
                cause = INFRA  # stopped with the phase by a signal to simpler
            devices = _devices(child.get("devices"))
            self._rows[(name, phase, 1)] = self._stand_in(
                name, phase, 1, "failed", cause, child,
                device=devices[0] if devices else None,
                duration_s=_number(child.get("duration_s")),
                message=_child_message(child),
                label=label,
            )  # fmt: skip

    def _registrations_without_a_test(self) -> None:
        """A poison-skip registration no test record followed (its process died first)."""
        for (phase, nodeid), typed in self._pending.items():
            registration = typed.raw
            attempt = registration.get("attempt")
            if type(attempt) is not int:  # the attempt of the test's last record, else 1
                seen = range(self._max_attempt, 0, -1)
                attempt = next((a for a in seen if (nodeid, phase, a) in self._rows), 1)
            found = _DEVICE_IN_WORKER.search(_text(registration.get("worker")))
            runtime = registration.get("runtime")
            row = self._stand_in(
                nodeid, phase, attempt, POISON_SKIPPED, DEVICE, registration,
                device=int(found.group(1)) if found else None,
                runtime=runtime if isinstance(runtime, str) else None,
                message=_text(registration.get("reason")),
            )  # fmt: skip
            held = self._rows.get((nodeid, phase, attempt))
            if held is None or supersedes(row, held):
                self._rows[(nodeid, phase, attempt)] = row
        self._pending.clear()

    def _stand_in(
        self,
        nodeid: str,
        phase: str,
        attempt: int,
        outcome: str,
        cause: str,
        record: Record,
        *,
        device: int | None = None,
        runtime: str | None = None,
        duration_s: float | None = None,
        message: str = "",
        label: str | None = None,
    ) -> Attempt:
        """The attempt a record other than the test's stands for (a child, a registration)."""
        return Attempt(
            self.run_id, nodeid, attempt, phase, outcome, duration_s, device, runtime,
            1 if record.get("quarantined") is True else 0, _number(record.get("ts")),
            None, None, cause, cause, message[:MESSAGE_CHARS] or None, label,
        )  # fmt: skip


def _lost_to_another_test(message: str, nodeid: str) -> bool:
    """The records the xdist controller writes for tests a crash cost (crash_watch.py)."""
    if message.startswith("not run: ") and "worker crash" in message:
        return True  # never started: the session stopped after other tests' crashes
    if message.removeprefix("Failed: ").startswith("no usable device in a fresh process"):
        return True  # its own fresh process found the card beyond reset before it ran
    if message.startswith("worker ") and _CRASHED_WHILE in message:
        named = message.split(_CRASHED_WHILE, 1)[1].split(" (after rc", 1)[0]
        # The message is cut at 300 characters: a long node id may be named only in part.
        return not (nodeid.startswith(named) or named.startswith(nodeid))
    return False


def _child_name(child: Record) -> str:
    nodeid, label = child.get("nodeid"), child.get("label")
    if isinstance(nodeid, str) and nodeid:
        return nodeid
    return label if isinstance(label, str) else ""


def _child_failed(child: Record) -> bool:
    # A missing returncode means nobody saw the child exit cleanly: that is not success.
    return child.get("returncode") != 0 or bool(child.get("timed_out")) or bool(child.get("signal"))


def _killed(child: Record) -> bool:
    return bool(child.get("timed_out")) or bool(child.get("signal"))


def _child_message(child: Record) -> str:
    if child.get("not_run"):
        return str(child["not_run"])
    said = []
    if child.get("timed_out"):
        said.append("timed out")
    if child.get("signal"):
        said.append(f"killed by {child['signal']}")
    elif type(child.get("returncode")) is int:
        said.append(f"exit code {child['returncode']}")
    return f"child {_text(child.get('label'))}: {', '.join(said) or 'no exit seen'}, no test record"


def _devices(value: object) -> list[int]:
    if not isinstance(value, list):
        return []
    return [d for d in value if type(d) is int]


def _number(value: object) -> float | None:
    return float(value) if type(value) is float or type(value) is int else None


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
