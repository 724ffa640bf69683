"""What ran and what did not: planned tests without a verdict, skips, runs where nothing ran.

Pure computation over report records and their verdicts, from the plan each test phase's
``start`` record carries; a phase without one counts the tests that reported
(docs/isolation.md, "Every test never run is counted").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from simpler.contract import SELECTING_PHASES, strip_ansi
from simpler.reporting.phase_accounts import PhaseAccount
from simpler.reporting.records import ChildRecord, PhaseRecord, Record, SessionRecord
from simpler.reporting.verdicts import Verdict

__all__ = ["Completeness", "Emptiness", "completeness_of", "early_stops"]


class Emptiness:
    """Why a run that ran nothing ran nothing (the empty string: something ran)."""

    NONE = ""
    ALL_SKIPPED = "all_skipped"  # every test with a verdict skipped
    NOTHING_SELECTED = "nothing_selected"  # pytest's "no tests collected" (exit 5)
    NOTHING_TO_RUN = "nothing_to_run"  # the phases asked for had nothing to do: not a failure


@dataclass(frozen=True)
class Completeness:
    without_verdict: list[str] = field(default_factory=list)  # planned, never reported
    without_verdict_why: list[str] = field(default_factory=list)  # "l2: interrupted by SIGINT"
    tested: int = 0  # tests with a verdict
    skipped: int = 0  # of them, skipped
    skip_reasons: list[tuple[str, int]] = field(default_factory=list)  # most common first
    device_tests: int = 0  # tests with a verdict that use a device
    device_skipped: int = 0
    emptiness: str = Emptiness.NONE
    idle_phases: tuple[str, ...] = ()  # test phases that ran with nothing to do

    @property
    def most_device_tests_skipped(self) -> bool:
        return self.device_skipped * 2 > self.device_tests > 0


def completeness_of(
    records: Sequence[Record],
    verdicts: dict[str, Verdict],
    phases: Sequence[PhaseAccount],
    *,
    red: bool,
) -> Completeness:
    """``red``: the run has an unrecovered failure already (then it did not "run nothing")."""
    phase_lists = _phase_tests(records)
    planned = {nodeid: phase for phase, listed in phase_lists.items() for nodeid in listed.planned}
    reported = set(verdicts) | {
        r.nodeid for r in records if isinstance(r, ChildRecord) and r.nodeid
    }
    missing = [nodeid for nodeid in planned if nodeid not in reported]
    skipped = [v for v in verdicts.values() if v.outcome == "skipped"]
    no_device = {nodeid for listed in phase_lists.values() for nodeid in listed.no_device}
    # Without a list of planned tests every test counts as a device test (a device suite's).
    device = [v for v in verdicts.values() if v.nodeid not in no_device]
    emptiness = Emptiness.NONE
    if not red and not missing:
        emptiness = _emptiness(verdicts, skipped, phase_lists, phases)
    return Completeness(
        without_verdict=missing,
        without_verdict_why=_why_missing(missing, planned, phases, records),
        tested=len(verdicts),
        skipped=len(skipped),
        skip_reasons=_grouped_reasons(skipped),
        device_tests=len(device),
        device_skipped=sum(1 for v in device if v.outcome == "skipped"),
        emptiness=emptiness,
        idle_phases=tuple(p for p, listed in phase_lists.items() if not listed.planned),
    )


def early_stops(records: Iterable[Record]) -> list[str]:
    """``-x``/``--maxfail`` stopped a pytest session: the tests it never ran have no verdict."""
    lines = []
    for record in records:
        if not isinstance(record, SessionRecord) or not record.stopped:
            continue
        collected, finished = record.collected, record.finished
        count = ""
        if collected is not None and finished is not None:
            count = f"; {max(collected - finished, 0)} of {collected} selected test(s) not run"
        phase = record.phase or "a"
        lines.append(f"*** pytest stopped the {phase} phase early: {record.stopped}{count} ***")
    return lines


@dataclass
class _PhaseTests:
    """What the start records of one phase say it was to run (its ``planned`` tests)."""

    planned: list[str] = field(default_factory=list)
    no_device: set[str] = field(default_factory=set)
    selected: int | None = None


def _phase_tests(records: Iterable[Record]) -> dict[str, _PhaseTests]:
    phase_lists: dict[str, _PhaseTests] = {}
    for record in records:
        if not isinstance(record, PhaseRecord) or not record.is_start:
            continue
        planned = record.planned
        if planned is None:
            continue
        listed = phase_lists.setdefault(record.phase, _PhaseTests())
        listed.planned += [n for n in planned if n not in listed.planned]
        listed.no_device |= set(record.no_device)
        if record.selected is not None:
            listed.selected = max(listed.selected or 0, record.selected)
    return phase_lists


def _emptiness(
    verdicts: dict[str, Verdict],
    skipped: list[Verdict],
    phase_lists: dict[str, _PhaseTests],
    phases: Sequence[PhaseAccount],
) -> str:
    if verdicts:
        return Emptiness.ALL_SKIPPED if len(skipped) == len(verdicts) else Emptiness.NONE
    selecting = [p.name for p in phases if p.name in SELECTING_PHASES]
    if phase_lists:
        # Every planning phase had nothing to do: nothing selected, or only another kind.
        selected = max((listed.selected or 0 for listed in phase_lists.values()), default=0)
        return Emptiness.NOTHING_TO_RUN if selected else Emptiness.NOTHING_SELECTED
    if selecting or not phases:
        return Emptiness.NOTHING_SELECTED  # as pytest says it: no tests collected
    return Emptiness.NOTHING_TO_RUN  # e.g. only a retry phase, and nothing to retry


def _why_missing(
    missing: list[str],
    planned: dict[str, str],
    phases: Sequence[PhaseAccount],
    records: Sequence[Record],
) -> list[str]:
    names = list(dict.fromkeys(planned[nodeid] for nodeid in missing))
    accounts = {p.name: p for p in phases}
    stopped = {r.phase for r in records if isinstance(r, SessionRecord) and r.stopped}
    why = []
    for name in names:
        account = accounts.get(name)
        if account is not None and account.not_started:
            reason = f"never started: {account.not_started[0]}"
        elif account is not None and account.deadline:
            reason = account.deadline[0]
        elif account is not None and account.interrupted:
            reason = f"interrupted by {account.interrupted[0]}"
        elif account is not None and account.errors:
            reason = "simpler failed inside the phase"
        elif name in stopped:
            reason = "pytest stopped early"
        elif account is not None and account.incomplete:
            reason = "the phase never ended"
        else:
            reason = "no record of them"
        why.append(f"{name}: {reason}")
    return why


def _grouped_reasons(skipped: list[Verdict]) -> list[tuple[str, int]]:
    reasons = Counter(_reason(v) for v in skipped)
    return sorted(reasons.items(), key=lambda item: (-item[1], item[0]))


def _reason(verdict: Verdict) -> str:
    message = verdict.test.message if verdict.test is not None else ""
    text = " ".join(strip_ansi(message).split()).removeprefix("Skipped: ")
    return text or "(no reason given)"
