"""Each phase of a run as its records account for it (``PhaseAccount``): its counts, how it
ended, what cut it, and whether it failed with no failed test to say why."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from simpler.contract import EXIT_INFRA, GREEN_OUTCOMES, phase_rank
from simpler.reporting.affected_block import AffectedDecision, decision_of
from simpler.reporting.records import PhaseRecord, Record, TestRecord

__all__ = ["READER_PHASES", "PhaseAccount", "account_phases", "unexplained_failure"]

# Phases that only read the report: one left unfinished or failed cannot hide a test.
READER_PHASES = frozenset({"report"})


@dataclass(frozen=True)
class PhaseAccount:
    """One phase of the run as its records tell it: counts, how it ended, what cut it."""

    name: str
    counts: dict[str, int]  # outcome -> tests whose last record in this phase had it
    counts_from_end_record: bool  # no test records: counts are the phase end record's
    unfinished_runs: tuple[str, ...]  # runs in which this phase started and never ended
    returncode: int | None  # the worst end returncode; None when it never ended
    duration_s: float
    errors: tuple[str, ...] = ()  # what broke inside simpler while the phase ran
    interrupted: tuple[str, ...] = ()  # the signals that stopped it (SIGTERM, SIGINT)
    not_started: tuple[str, ...] = ()  # why it never started ("interrupted by SIGINT")
    deadline: tuple[str, ...] = ()  # the run's deadline cut it ("deadline 10m reached")
    children: str = ""  # how its children started ("forked from a warm process")
    slots: int | None = None  # the most processes it ran at once (None: an older report)
    devices: tuple[int, ...] = ()  # the devices its tests used
    affected: AffectedDecision | None = None  # --affected-since: its start record's decision

    @property
    def incomplete(self) -> bool:
        return bool(self.unfinished_runs)


def account_phases(
    by_phase: dict[str, list[Record]], outcomes: dict[str, Counter[str]]
) -> list[PhaseAccount]:
    """Each phase that ran or reported tests, in phase order; ``outcomes``: per phase, the
    number of tests whose verdict there had each outcome."""
    seen = [
        name
        for name, group in by_phase.items()
        if any(isinstance(r, PhaseRecord | TestRecord) for r in group)
    ]
    ordered = sorted(seen, key=phase_rank)  # stable: unknown phases first, as they came
    return [_account_phase(name, by_phase[name], outcomes[name]) for name in ordered]


def _account_phase(name: str, records: list[Record], outcomes: Counter[str]) -> PhaseAccount:
    ends = [r for r in records if isinstance(r, PhaseRecord) and r.is_end]
    counts = Counter(outcomes)
    from_end = not counts
    if from_end:
        for end in ends:
            counts.update(end.counts)
    returncodes = [end.returncode for end in ends if end.returncode is not None]
    return PhaseAccount(
        name=name,
        counts=dict(counts),
        counts_from_end_record=from_end and bool(counts),
        unfinished_runs=() if name in READER_PHASES else _unfinished_runs(records),
        returncode=max(returncodes, key=abs) if returncodes else None,
        duration_s=sum(end.duration_s or 0.0 for end in ends),
        errors=_texts(end.error for end in ends),
        interrupted=_texts(end.interrupted for end in ends),
        not_started=_texts(end.not_started for end in ends),
        deadline=_texts(end.deadline for end in ends),
        children=next(iter(_texts(end.children for end in ends)), ""),
        slots=max((end.slots for end in ends if end.slots is not None), default=None),
        devices=tuple(sorted({device for end in ends for device in end.devices})),
        affected=decision_of(records),
    )


def _texts(values: Iterable[str | None]) -> tuple[str, ...]:
    """The non-empty values of an optional text field of the phase's end records."""
    return tuple(text for text in values if text)


def _unfinished_runs(phase_records: list[Record]) -> tuple[str, ...]:
    balance: Counter[str] = Counter()
    for record in phase_records:
        if isinstance(record, PhaseRecord):
            balance[record.run] += {"start": 1, "end": -1}.get(record.event, 0)
    return tuple(run for run, open_starts in balance.items() if open_starts > 0)


def unexplained_failure(phase: PhaseAccount) -> bool:
    """The phase failed and no failed test says why: its own failure to report."""
    # A phase's returncode is simpler's: 2 a usage error, 3 pytest's internal error; each
    # ran nothing it could report, and a red phase with no red test must still be red. 1 with
    # no failing test means the failing test's record was lost; 5 is "no tests collected", an
    # empty selection rather than a failure. 3 is red by the run's ruling (infrastructure),
    # not as a failed test: its tests are counted as not run.
    if phase.errors:
        return True
    if phase.interrupted or phase.deadline:
        return False  # a signal or the deadline is not a failed test: its tests are not run
    if phase.name in READER_PHASES or phase.returncode in (None, 0, EXIT_INFRA, 5):
        return False
    return not any(
        count for outcome, count in phase.counts.items() if outcome not in GREEN_OUTCOMES
    )
