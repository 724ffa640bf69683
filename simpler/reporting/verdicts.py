"""Final verdicts from report records: what each test ended as, and what still fails.

Pure computation over the records of ``simpler.reporting.report_file``; nothing here renders text.
``simpler.reporting.summary`` turns an :class:`Analysis` into the summary a user reads.
:func:`supersedes` is the verdict rule, which the history's import follows too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple, Protocol

from simpler.contract import GREEN_OUTCOMES, PASSING_OUTCOMES, phase_rank
from simpler.reporting.phase_accounts import PhaseAccount, account_phases, unexplained_failure
from simpler.reporting.records import (
    ChildRecord,
    LifecycleRecord,
    PoisonSkipRecord,
    Record,
    TestRecord,
)

__all__ = [
    "Analysis",
    "Failure",
    "PhaseAccount",
    "RecordStanding",
    "Standing",
    "Verdict",
    "analyze",
    "decide_verdicts",
    "select_latest_runs",
    "standing_of",
    "supersedes",
]

POISON_SKIPPED, SKIPPED = "poison_skipped", "skipped"


class Standing(Protocol):
    """What the verdict rule weighs of one record of a test: a report's test record or
    poison-skip registration (:func:`standing_of`), or a history's attempt row."""

    @property
    def phase(self) -> str: ...
    @property
    def ts(self) -> float | None: ...
    @property
    def attempt(self) -> int | None: ...  # None: a registration (the attempt it meets)
    @property
    def outcome(self) -> str: ...


class RecordStanding(NamedTuple):
    """A :class:`Standing` made of a record's fields."""

    phase: str
    ts: float | None
    attempt: int | None
    outcome: str


def supersedes(new: Standing, held: Standing) -> bool:
    """The verdict rule: whether ``new`` replaces ``held`` as their test's final record in
    one run, in the report's verdicts and in the history's alike.

    The latest phase (``phase_rank``), then time, then attempt; of two alike, the one read
    later; a poison-skip wins over a plain skip of its attempt (docs/design.md, "Phases").
    """
    if new.phase == held.phase and (
        new.attempt == held.attempt or new.attempt is None or held.attempt is None
    ):
        if new.outcome == SKIPPED and held.outcome == POISON_SKIPPED:
            return False
        if new.outcome == POISON_SKIPPED and held.outcome == SKIPPED:
            return True
        return (new.ts or 0.0) >= (held.ts or 0.0)
    return _final_key(new) >= _final_key(held)


def _final_key(standing: Standing) -> tuple[int, float, int]:
    attempt = standing.attempt
    return phase_rank(standing.phase), standing.ts or 0.0, 1 if attempt is None else attempt


def standing_of(record: TestRecord | PoisonSkipRecord) -> RecordStanding:
    """A report record as the rule weighs it: a registration is a poison-skip of the attempt
    it meets; a test record without an attempt is the first, as the history stores it."""
    if isinstance(record, PoisonSkipRecord):
        return RecordStanding(record.phase, record.ts, None, POISON_SKIPPED)
    attempt = record.attempt
    return RecordStanding(
        record.phase, record.ts, 1 if attempt is None else attempt, record.outcome
    )


# Not frozen: a large report builds one per test, and frozen dataclasses are slow to make.
# Nothing mutates a Verdict after analysis; ``replace`` makes a new one.
@dataclass(slots=True)
class Verdict:
    nodeid: str
    outcome: str
    phase: str
    attempt: int
    record: TestRecord | PoisonSkipRecord  # the test record that decided it, or the registration
    registration: PoisonSkipRecord | None = None  # the latest poison_skip record for this node id

    @property
    def green(self) -> bool:
        return self.outcome in GREEN_OUTCOMES

    @property
    def never_rerun(self) -> bool:
        return self.outcome == POISON_SKIPPED

    @property
    def test(self) -> TestRecord | None:
        """The test record that decided it; None when a registration did (it never ran)."""
        return self.record if isinstance(self.record, TestRecord) else None

    @property
    def skip_reason(self) -> str:
        """Why a poison-skipped test never ran: its registration's reason, else its message."""
        said = self.registration or self.record
        reason = said.reason if isinstance(said, PoisonSkipRecord) else ""
        return reason or (self.record.message if isinstance(self.record, TestRecord) else "")

    @property
    def quarantined(self) -> bool:
        """Its deciding record says a test quarantine covered it: it does not gate."""
        return self.record.quarantined


@dataclass(frozen=True)
class Failure:
    """One unrecovered failure: a test verdict, a failed child job, or a failed phase."""

    kind: str  # "test", "child" or "phase"
    nodeid: str = ""
    verdict: Verdict | None = None
    child: ChildRecord | None = None  # the failed child job (also attached to a failed test)
    phase: PhaseAccount | None = None

    @property
    def quarantined(self) -> bool:
        """A quarantined test's failure: its verdict decides; with no verdict (its child died
        before its test wrote a record), the child's record, which the orchestrator marks."""
        if self.verdict is not None:
            return self.verdict.quarantined
        return self.child is not None and self.child.quarantined


@dataclass(frozen=True)
class Analysis:
    runs: list[str]
    verdicts: dict[str, Verdict]
    phases: list[PhaseAccount]
    failures: list[Failure]
    lifecycle: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (run, worker)
    quarantined: list[Failure] = field(default_factory=list)  # failures that do not gate

    @property
    def incomplete_phases(self) -> list[PhaseAccount]:
        return [phase for phase in self.phases if phase.incomplete]

    def with_outcome(self, outcome: str) -> list[Verdict]:
        return [verdict for verdict in self.verdicts.values() if verdict.outcome == outcome]


def select_latest_runs(records_by_file: Sequence[Sequence[Record]]) -> list[Record]:
    """Per file, only the records of its latest run; then all files concatenated.

    A report file that outlives a run (a developer's default path) accumulates runs;
    CI matrix shards each write their own file and run id and merge into one summary.
    """
    selected: list[Record] = []
    for records in records_by_file:
        latest = next((r.run for r in reversed(records) if r.run), "")
        # No run id at all (plain pytest, outside ``simpler run``): the file is one run.
        selected.extend(r for r in records if not latest or r.run == latest)
    return selected


def analyze(records: Sequence[Record]) -> Analysis:
    by_phase = _group_by_phase(records)
    per_phase = {name: _decide_within_phase(group) for name, group in by_phase.items()}
    verdicts = _merge_phases(per_phase, records)
    outcomes = {name: Counter(v.outcome for v in got.values()) for name, got in per_phase.items()}
    phases = account_phases(by_phase, outcomes)
    failures = _find_failures(records, verdicts, phases)
    return Analysis(
        runs=list(dict.fromkeys(r.run for r in records if r.run)),
        verdicts=verdicts,
        phases=phases,
        failures=[f for f in failures if not f.quarantined],
        lifecycle=_lifecycle_paths(records),
        quarantined=[f for f in failures if f.quarantined],
    )


def decide_verdicts(records: Iterable[Record]) -> dict[str, Verdict]:
    """The last test record (or poison registration) of each node id, phases in order."""
    ordered = list(records)
    by_phase = _group_by_phase(ordered)
    per_phase = {name: _decide_within_phase(group) for name, group in by_phase.items()}
    return _merge_phases(per_phase, ordered)


def _group_by_phase(records: Iterable[Record]) -> dict[str, list[Record]]:
    """Records per phase, each list in file (time) order; one pass over a large report."""
    groups: dict[str, list[Record]] = {}
    for record in records:
        groups.setdefault(record.phase, []).append(record)
    return groups


def _decide_within_phase(records: list[Record]) -> dict[str, Verdict]:
    # The hot loop of a large report: keep the winning record per node id, and build
    # a Verdict only for the winners.
    winners: dict[str, TestRecord | PoisonSkipRecord] = {}
    for record in records:
        if not isinstance(record, TestRecord | PoisonSkipRecord):
            continue
        nodeid = record.nodeid
        if not nodeid:
            continue
        current = winners.get(nodeid)
        if current is None or supersedes(standing_of(record), standing_of(current)):
            winners[nodeid] = record
    return {nodeid: _verdict_of(nodeid, record) for nodeid, record in winners.items()}


def _merge_phases(
    per_phase: dict[str, dict[str, Verdict]], records: Iterable[Record]
) -> dict[str, Verdict]:
    # Shard files may be merged in any order: each phase's winners meet by the rule, which a
    # later phase wins. The first phase's are taken whole (most tests have no other).
    verdicts: dict[str, Verdict] = {}
    for name in sorted(per_phase, key=phase_rank):
        if not verdicts:
            verdicts.update(per_phase[name])
            continue
        for nodeid, verdict in per_phase[name].items():
            held = verdicts.get(nodeid)
            if held is None or supersedes(standing_of(verdict.record), standing_of(held.record)):
                verdicts[nodeid] = verdict
    registrations = {r.nodeid: r for r in records if isinstance(r, PoisonSkipRecord)}
    for nodeid, registration in registrations.items():
        if nodeid in verdicts:
            verdicts[nodeid] = replace(verdicts[nodeid], registration=registration)
    return verdicts


def _verdict_of(nodeid: str, record: TestRecord | PoisonSkipRecord) -> Verdict:
    if isinstance(record, PoisonSkipRecord):
        outcome, attempt = POISON_SKIPPED, None
    else:
        outcome, attempt = record.outcome, record.attempt
    return Verdict(
        nodeid=nodeid,
        outcome=outcome or "unknown",
        phase=record.phase,
        attempt=attempt if attempt is not None else 1,
        record=record,
    )


def _find_failures(
    records: Sequence[Record], verdicts: dict[str, Verdict], phases: list[PhaseAccount]
) -> list[Failure]:
    children = _failed_children(records)
    failures = [
        Failure("test", nodeid, verdict=verdict, child=children.pop(nodeid, None))
        for nodeid, verdict in verdicts.items()
        if not verdict.green
    ]
    for key, child in children.items():
        verdict = verdicts.get(key)
        # A child whose test passed (or was recovered later) is not a failure; one whose
        # test never reported (it crashed first) or only skipped must not pass for green.
        if verdict is None or verdict.outcome not in PASSING_OUTCOMES:
            failures.append(Failure("child", child.nodeid, verdict=verdict, child=child))
    # A child that failed or never started explains its phase's red exit: one cause, one entry.
    explained = {f.child.phase for f in failures if f.child is not None}
    failures += [
        Failure("phase", phase=phase)
        for phase in phases
        if unexplained_failure(phase) and phase.name not in explained
    ]
    return failures


def _failed_children(records: Sequence[Record]) -> dict[str, ChildRecord]:
    """The last child record per node id (or label), where that last one failed."""
    last: dict[str, ChildRecord] = {}
    for record in records:
        if isinstance(record, ChildRecord):
            last[record.nodeid or f"child:{record.label}"] = record
    return {key: child for key, child in last.items() if child.failed}


def _lifecycle_paths(records: Sequence[Record]) -> dict[tuple[str, str], list[str]]:
    paths: dict[tuple[str, str], list[str]] = {}
    for record in records:
        if not isinstance(record, LifecycleRecord):
            continue
        path = paths.setdefault((record.run, record.worker), [])
        source, dest = record.source, record.dest
        if source and (not path or path[-1] != source):
            path.append(source)
        if dest:
            path.append(dest)
    return paths
