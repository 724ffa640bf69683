"""The end-of-run summary: report records in, one plain-text summary and an exit code out.

Pure: no files, no environment, no GitHub Actions markup (the CLI adds those). The text is
printed last, outside any log group, so every unrecovered failure is visible in the tail.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from simpler.contract import EXIT_FAILED, EXIT_INFRA, EXIT_NO_TESTS, EXIT_OK, OUTCOME_ORDER
from simpler.devices import format_devices
from simpler.reporting.completeness import Completeness, Emptiness, completeness_of, early_stops
from simpler.reporting.failure_block import failures_section
from simpler.reporting.last_screen import last_screen
from simpler.reporting.phase_accounts import READER_PHASES, PhaseAccount
from simpler.reporting.quarantine_block import (
    QuarantineLine,
    quarantine_block,
    quarantine_lines,
)
from simpler.reporting.quarantine_file import QuarantineFile
from simpler.reporting.report_file import Record
from simpler.reporting.resource_block import render_resource_failures
from simpler.reporting.verdicts import (
    Analysis,
    Failure,
    Verdict,
    analyze,
    select_latest_runs,
)

__all__ = [
    "Ruling",
    "Summary",
    "select_latest_runs",
    "summarize",
]


@dataclass(frozen=True)
class Ruling:
    """An exit code the run decided before its summary (an interruption, a usage error, an
    infrastructure failure): the verdict line says it, and the process returns it."""

    code: int
    reason: str


@dataclass
class Summary:
    text: str
    # 0 green; 1 unrecovered failures, an incomplete run, planned tests without a verdict, or
    # nothing ran under --fail-if-nothing-ran; 5 nothing selected; else the run's Ruling.
    exit_code: int
    verdicts: dict[str, Verdict]  # final verdict per node id
    incomplete: bool
    runs: list[str] = field(default_factory=list)
    phases: list[PhaseAccount] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)  # unrecovered, in report order
    recovered: list[Verdict] = field(default_factory=list)
    flaky: list[Verdict] = field(default_factory=list)
    malformed: int = 0
    completeness: Completeness = field(default_factory=Completeness)
    ruling: Ruling | None = None
    quarantined: list[Failure] = field(default_factory=list)  # failures that do not gate
    quarantine_lines: list[QuarantineLine] = field(default_factory=list)  # the block's tests
    code_coverage: list[str] = field(default_factory=list)  # lost/partial processes, the total
    coverage_gate: str | None = None  # "coverage 71.2% < 80%" when --cov-fail-under failed

    @property
    def nothing_ran(self) -> bool:
        """No test ran, though tests were meant to: all skipped, or none selected."""
        return self.completeness.emptiness in (Emptiness.ALL_SKIPPED, Emptiness.NOTHING_SELECTED)

    @property
    def show_skip_reasons(self) -> bool:
        return self.nothing_ran or self.completeness.most_device_tests_skipped


def summarize(
    records: list[Record],
    *,
    malformed: int = 0,
    fail_on_flaky: bool = False,
    fail_if_nothing_ran: bool = False,
    tail_lines: int = 80,
    ruling: Ruling | None = None,
    test_quarantine: QuarantineFile | None = None,  # the entries' reasons, for the block
    code_coverage: list[str] | None = None,  # the coverage lines, above the last screen's index
    coverage_gate: str | None = None,  # why the coverage gate failed (--cov-fail-under)
) -> Summary:
    analysis = analyze(records)
    ruling = ruling or _recorded_ruling(analysis.phases)
    incomplete = bool(analysis.incomplete_phases)
    red = bool(analysis.failures) or incomplete
    summary = Summary(
        text="",
        exit_code=0,
        verdicts=analysis.verdicts,
        incomplete=bool(analysis.incomplete_phases),
        runs=analysis.runs,
        phases=analysis.phases,
        failures=analysis.failures,
        recovered=analysis.with_outcome("recovered"),
        flaky=analysis.with_outcome("flaky"),
        malformed=malformed,
        completeness=completeness_of(records, analysis.verdicts, analysis.phases, red=red),
        ruling=ruling,
        quarantined=analysis.quarantined,
        code_coverage=code_coverage or [],
        coverage_gate=coverage_gate,
    )
    summary.exit_code = _exit_code(summary, fail_on_flaky, fail_if_nothing_ran)
    reasons = _verdict_reasons(summary, fail_on_flaky, fail_if_nothing_ran)
    summary.quarantine_lines = quarantine_lines(
        summary.verdicts, summary.quarantined, summary.failures, test_quarantine
    )
    summary.text = _render(summary, analysis, tail_lines, early_stops(records), reasons)
    return summary


def _recorded_ruling(phases: list[PhaseAccount]) -> Ruling | None:
    """The run's infrastructure failure as its phase records keep it (pytest's internal error,
    a phase failed inside simpler): a report read again is exactly as red as the run was."""
    broken = [p.name for p in phases if p.returncode == EXIT_INFRA and p.name not in READER_PHASES]
    if not broken:
        return None
    return Ruling(EXIT_INFRA, f"infrastructure failure in phase {', '.join(broken)}")


def _exit_code(summary: Summary, fail_on_flaky: bool, fail_if_nothing_ran: bool) -> int:
    if summary.ruling is not None:
        return summary.ruling.code  # the run's own: the verdict line never disagrees with it
    red = summary.failures or summary.incomplete or summary.completeness.without_verdict
    if red or (fail_on_flaky and any(not v.quarantined for v in summary.flaky)):
        return EXIT_FAILED
    if (summary.nothing_ran and fail_if_nothing_ran) or summary.coverage_gate is not None:
        return EXIT_FAILED
    if _deadline(summary):
        return EXIT_FAILED  # a run cut by its deadline is red, whatever finished
    if summary.completeness.emptiness == Emptiness.NOTHING_SELECTED:
        return EXIT_NO_TESTS  # pytest's "no tests collected", never green
    return EXIT_OK


def _render(
    summary: Summary,
    analysis: Analysis,
    tail_lines: int,
    early_stops: list[str],
    reasons: list[str],
) -> str:
    lines = _header(summary)
    multi_run = len(summary.runs) > 1
    lines += [
        _phase_line(p, multi_run, _failed_children_in(p, summary))
        for p in summary.phases
        if p.name not in READER_PHASES  # the report phase reads the others; it has no counts
    ]
    how = [p.children for p in summary.phases if p.children]
    if how:  # said once: the last phase that started children says how the run's started
        lines.append(f"children: {how[-1]}")
    failed = [f.nodeid for f in summary.failures if f.kind == "test"]
    for phase in summary.phases:
        if phase.affected is not None:
            lines += phase.affected.lines(failed)
    lines.append("")
    if summary.incomplete:
        names = ", ".join(_phase_name(p, len(summary.runs) > 1) for p in analysis.incomplete_phases)
        lines.append(
            f"*** Run is INCOMPLETE: phase(s) {names} started and never ended; "
            "what finished is listed below ***"
        )
    lines += early_stops
    if summary.completeness.emptiness == Emptiness.NOTHING_SELECTED:
        lines.append("*** nothing ran: the report holds no test verdict ***")
    # Only the children that are still failures: one that recovered on retry is not news.
    block = render_resource_failures(
        [f.child for f in summary.failures if f.child is not None], tail_lines=tail_lines
    )
    if block:
        lines += [block.rstrip("\n"), ""]
    lines += failures_section(summary.failures, analysis, tail_lines)
    lines += _retried_section(summary.recovered, summary.flaky)
    lines += quarantine_block(summary.quarantine_lines)
    lines += last_screen(
        summary.failures,
        summary.completeness,
        show_skips=summary.show_skip_reasons,
        verdict_line=_verdict_line(summary, reasons),
        code_coverage=summary.code_coverage,
    )
    return "\n".join(lines) + "\n"


def _header(summary: Summary) -> list[str]:
    runs = ", ".join(summary.runs) or "(no run id)"
    lines = [f"simpler summary: run{'s' if len(summary.runs) > 1 else ''} {runs}"]
    if summary.malformed:
        lines.append(f"{summary.malformed} malformed report line(s) skipped")
    return lines


def _failed_children_in(phase: PhaseAccount, summary: Summary) -> int:
    return sum(
        1
        for f in summary.failures
        if f.kind == "child" and f.child is not None and f.child.phase == phase.name
    )


def _phase_line(phase: PhaseAccount, name_runs: bool, failed_children: int) -> str:
    counts = _counts_text(phase.counts) or "no test records"
    if phase.not_started and not phase.counts:
        counts = f"not started ({phase.not_started[0]})"
    if failed_children:  # a crashed child leaves no test record: count it where it ran
        counts += f", {failed_children} child job(s) failed"
    if phase.counts_from_end_record:
        counts += " (from the phase end record)"
    notes = [f"{phase.duration_s:.1f}s"] if phase.duration_s else []
    if phase.returncode:
        notes.append(f"returncode {phase.returncode}")
    if phase.slots:
        notes.append(_slots_text(phase.slots, phase.devices))
    line = f"{phase.name or '(no phase)'}: {counts}" + (f" ({', '.join(notes)})" if notes else "")
    if phase.incomplete:
        line += " -- INCOMPLETE (started, never ended)"
        if name_runs:
            line += f" in run {', '.join(phase.unfinished_runs)}"
    return line


def _slots_text(slots: int, devices: tuple[int, ...]) -> str:
    """``8 processes, device 0``: the processes a phase ran at once, and the devices its tests
    used (none: every test it ran used no device)."""
    processes = f"{slots} process" + ("es" if slots != 1 else "")
    if not devices:
        return f"{processes}, no device"
    return f"{processes}, device{'s' if len(devices) > 1 else ''} {format_devices(list(devices))}"


def _phase_name(phase: PhaseAccount, name_runs: bool) -> str:
    return f"{phase.name} (run {', '.join(phase.unfinished_runs)})" if name_runs else phase.name


def _counts_text(counts: dict[str, int]) -> str:
    known = [o for o in OUTCOME_ORDER if counts.get(o)]
    ordered = known + sorted(o for o in counts if o not in OUTCOME_ORDER and counts[o])
    return ", ".join(f"{counts[o]} {o}" for o in ordered)


def _retried_section(recovered: list[Verdict], flaky: list[Verdict]) -> list[str]:
    lines = [f"Recovered (re-run in a fresh process): {len(recovered)}"]
    lines += [f"  {v.nodeid} (attempt {v.attempt})" for v in recovered]
    lines.append(f"Flaky (failed, then passed on retry): {len(flaky)}")
    lines += [f"  {v.nodeid} passed on attempt {v.attempt}" for v in flaky]
    lines.append("")
    return lines


def _verdict_line(summary: Summary, reasons: list[str]) -> str:
    suffix = f" ({'; '.join(reasons)})" if reasons else ""
    return f"simpler: {_verdict_counts(summary)} -> exit {summary.exit_code}{suffix}"


def _verdict_counts(summary: Summary) -> str:
    completeness = summary.completeness
    if completeness.emptiness == Emptiness.ALL_SKIPPED:
        return f"nothing ran: {completeness.skipped} of {completeness.tested} skipped"
    if completeness.emptiness == Emptiness.NOTHING_SELECTED:
        return "nothing ran: no test selected"
    if completeness.emptiness == Emptiness.NOTHING_TO_RUN:
        idle = completeness.idle_phases or tuple(p.name for p in summary.phases)
        return "nothing to run" + (f" in phase(s) {', '.join(idle)}" if idle else "")
    outcomes = [v.outcome for v in summary.verdicts.values()]
    # An error (setup or teardown) is counted apart from a failure, as pytest counts it.
    errors = sum(
        1 for f in summary.failures if f.verdict is not None and f.verdict.outcome == "error"
    )
    parts = [
        f"{outcomes.count('passed')} passed",
        f"{len(summary.recovered)} recovered",
        f"{len(summary.flaky)} flaky",
        f"{len(summary.failures) - errors} failed",
    ]
    if errors:
        parts.append(f"{errors} error{'s' if errors > 1 else ''}")
    if summary.quarantined:  # failed, yet not counted above: their quarantine holds
        parts.append(f"{len(summary.quarantined)} quarantined")
    parts += [
        f"{outcomes.count(o)} {o}" for o in ("skipped", "xfailed", "xpassed") if o in outcomes
    ]
    if completeness.without_verdict:
        parts.append(f"{len(completeness.without_verdict)} not run")
    return ", ".join(parts)


def _verdict_reasons(summary: Summary, fail_on_flaky: bool, fail_if_nothing_ran: bool) -> list[str]:
    """Why the exit code is not what the counts alone would say."""
    applies = (
        ("INCOMPLETE", summary.incomplete),
        ("flaky fails the run: --fail-on-flaky", fail_on_flaky and bool(summary.flaky)),
        ("--fail-if-nothing-ran", fail_if_nothing_ran and summary.nothing_ran),
        (summary.coverage_gate or "", summary.coverage_gate is not None),
    )
    reasons = [reason for reason, applies_here in applies if applies_here]
    deadline = _deadline(summary)
    if deadline:
        reasons.append(f"{deadline}: {len(summary.completeness.without_verdict)} not run")
    if summary.ruling is not None:
        reasons.append(summary.ruling.reason)
    return reasons


def _deadline(summary: Summary) -> str:
    """``deadline 10m reached`` when the run's deadline cut a phase; empty otherwise."""
    return next((p.deadline[0] for p in summary.phases if p.deadline), "")
