"""Why each attempt of a run failed: the test itself, the device, or the infrastructure.

Pure computation over one run's records, in file order, one :class:`RunAttribution` per run
and source (report file), since a worker's lifecycle means something only within its own
machine's file (docs/history.md, "How the rules read the records").
"""

from __future__ import annotations

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
_GREEN = frozenset(GREEN_OUTCOMES)
# Every field of a test record the attempt keeps: test() reads them from the record's dict by
# position, typed by hand, since that is its hot path (a million records in a long history).
_TEST = kinds.TestRecord
_TEST_FIELD_NAMES = tuple(
    field.key
    for field in (
        _TEST.nodeid, _TEST.phase, _TEST.attempt, _TEST.outcome, _TEST.duration_s, _TEST.device,
        _TEST.runtime, _TEST.ts, _TEST.rc, _TEST.where, _TEST.message,
    )
)  # fmt: skip
_TEST_FIELDS = itemgetter(*_TEST_FIELD_NAMES)
_QUARANTINED = _TEST.quarantined.key

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
        self._pending: dict[tuple[str, str], kinds.PoisonSkipRecord] = {}  # (phase, nodeid)
        self._children: dict[tuple[str, str], tuple[kinds.ChildRecord, str]] = {}  # -> cause
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
                1 if record.get(_QUARANTINED) is True else 0,
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
        if isinstance(typed, kinds.LifecycleRecord):
            self._lifecycle(typed)
        elif isinstance(typed, kinds.PoisonSkipRecord) and typed.nodeid:
            self._pending[(typed.phase, typed.nodeid)] = typed
        elif isinstance(typed, kinds.ChildRecord):
            self._child(typed)
        elif isinstance(typed, kinds.DeviceRetiredRecord):
            self._retired.setdefault(typed.phase, set()).update(typed.devices)
        elif isinstance(typed, kinds.PhaseRecord) and typed.is_end and typed.interrupted:
            self._interrupted.add(typed.phase)

    def attempts(self, *, complete: bool) -> list[Attempt]:
        """Every attempt of the part; a failure's cause is ``infra`` unless ``complete``."""
        self._registrations_without_a_test()
        self._children_without_a_test()
        rows = list(self._rows.values())
        if complete:
            return rows
        return [row if row.own_cause is None else row._replace(cause=INFRA) for row in rows]

    # -- lifecycle and device state ------------------------------------------------------

    def _lifecycle(self, record: kinds.LifecycleRecord) -> None:
        worker, dest, device = record.worker, record.dest, record.device
        if not worker:
            return
        if dest == "poisoned":
            if record.source != "poisoned" or worker not in self._poisoned_by:
                self._poisoned_by[worker] = record.nodeid
        elif dest in _CLEARED:
            self._poisoned_by.pop(worker, None)
        elif dest == "skipped" and record.trigger != "process_must_end" and device is not None:
            # Given up on (queries.py: retired_devices): whoever poisoned it owns that.
            self._gave_up.setdefault(device, set()).add(record.nodeid)

    def _on_retired_card(self, phase: str, devices: Iterable[int], nodeid: str) -> bool:
        retired = self._retired.get(phase)
        if not retired:
            return False
        return any(d in retired and nodeid not in self._gave_up.get(d, ()) for d in devices)

    def _cause_of_failed_test(self, record: Record, nodeid: str, phase: str, outcome: str) -> str:
        if outcome == POISON_SKIPPED:
            return DEVICE
        test = _TEST(record)  # typed off the hot path: only a failure gets here
        if _lost_to_another_test(test, nodeid):
            return DEVICE
        if test.worker:
            poisoner = self._poisoned_by.get(test.worker)
            # An unnamed poisoner is another test unless this one says it poisoned the worker.
            if poisoner is not None and poisoner != nodeid and (poisoner or not test.poisoned):
                return DEVICE
        device = test.device
        if device is not None and self._on_retired_card(phase, (device,), nodeid):
            return DEVICE
        return TEST

    # -- Resource children -----------------------------------------------------------------

    def _child(self, record: kinds.ChildRecord) -> None:
        phase = record.phase
        name = record.nodeid or record.label
        if not name:
            return
        reason = record.not_run
        if reason:
            if "session_timeout" in reason:
                self._timed_out_phases.add(phase)
            # Too few cards left that are not retired (older reports: "outside quarantine"): the
            # device's doing; any other reason (-x, a signal to simpler) is the run's.
            cause = DEVICE if RETIRED_NOT_RUN in reason or "quarantine" in reason else INFRA
        elif phase in self._timed_out_phases and _killed(record):
            cause = INFRA  # stopped with every running child when the session timed out
        elif self._on_retired_card(phase, record.devices, name):
            cause = DEVICE
        else:
            cause = TEST
        self._children[(phase, name)] = (record, cause)

    def _children_without_a_test(self) -> None:
        """A failed child whose test left no record (it never started, was killed, or died
        before pytest reported) stands for the test; every child names its test's label."""
        for (phase, name), (child, cause) in self._children.items():
            label = child.label or None
            tested = False
            # A child of one test: it cost the run the child's wall, as learned durations say.
            wall = child.duration_s if child.nodeid == name else None
            for attempt in range(1, self._max_attempt + 1):
                if (row := self._rows.get((name, phase, attempt))) is not None:
                    tested, took = True, row.duration_s if wall is None else wall
                    self._rows[(name, phase, attempt)] = row._replace(label=label, duration_s=took)
            if tested or not child.failed:
                continue
            if cause == TEST and phase in self._interrupted and _killed(child):
                cause = INFRA  # stopped with the phase by a signal to simpler
            devices = child.devices
            self._rows[(name, phase, 1)] = self._stand_in(
                name, phase, 1, "failed", cause, child,
                device=devices[0] if devices else None,
                duration_s=child.duration_s,
                message=_child_message(child),
                label=label,
            )  # fmt: skip

    def _registrations_without_a_test(self) -> None:
        """A poison-skip registration no test record followed (its process died first)."""
        for (phase, nodeid), registration in self._pending.items():
            # Not a field simpler writes: a registration of another writer may number its attempt.
            attempt = registration.raw.get("attempt")
            if type(attempt) is not int:  # the attempt of the test's last record, else 1
                seen = range(self._max_attempt, 0, -1)
                attempt = next((a for a in seen if (nodeid, phase, a) in self._rows), 1)
            row = self._stand_in(
                nodeid, phase, attempt, POISON_SKIPPED, DEVICE, registration,
                device=registration.device,
                runtime=registration.runtime,
                message=registration.reason,
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
        record: kinds.ChildRecord | kinds.PoisonSkipRecord,
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
            1 if record.quarantined else 0, record.ts,
            None, None, cause, cause, message[:MESSAGE_CHARS] or None, label,
        )  # fmt: skip


def _lost_to_another_test(test: kinds.TestRecord, nodeid: str) -> bool:
    """The records the xdist controller writes for tests a crash cost (crash_watch.py)."""
    if test.crashed and test.crashed != nodeid:
        return True  # its xdist worker crashed while another test ran
    message = test.message
    if message.startswith("not run: ") and "worker crash" in message:
        return True  # never started: the session stopped after other tests' crashes
    # its own fresh process found the card beyond reset before it ran
    return message.removeprefix("Failed: ").startswith("no usable device in a fresh process")


def _killed(child: kinds.ChildRecord) -> bool:
    return child.timed_out or bool(child.signal)


def _child_message(child: kinds.ChildRecord) -> str:
    if child.not_run:
        return child.not_run
    said = []
    if child.timed_out:
        said.append("timed out")
    if child.signal:
        said.append(f"killed by {child.signal}")
    elif child.returncode is not None:
        said.append(f"exit code {child.returncode}")
    return f"child {child.label}: {', '.join(said) or 'no exit seen'}, no test record"
