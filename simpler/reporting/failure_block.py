"""One unrecovered failure in the summary: its headline (node id or label, outcome, rc at where
or the exception's first line) and its details (the lifecycle path, the child that ran it,
the last lines of its output)."""

from __future__ import annotations

from simpler.contract import strip_ansi
from simpler.reporting.records import ChildRecord, PoisonSkipRecord, TestRecord
from simpler.reporting.resource_block import tail_block
from simpler.reporting.verdicts import Analysis, Failure, Verdict

__all__ = ["failure_details", "failure_headline", "failures_section"]


def failures_section(failures: list[Failure], analysis: Analysis, tail_lines: int) -> list[str]:
    if not failures:
        return ["No unrecovered failures.", ""]
    lines = [f"*** {len(failures)} unrecovered failure(s) ***", ""]
    for number, failure in enumerate(failures, 1):
        lines.append(f"{number}) {failure_headline(failure)}")
        lines += [f"  {line}" for line in failure_details(failure, analysis, tail_lines)]
        lines.append("")
    return lines


def failure_headline(failure: Failure) -> str:
    """One line naming the failure and why, fit for an annotation title."""
    if failure.kind == "phase" and failure.phase is not None and failure.phase.errors:
        return f"phase {failure.phase.name} failed inside simpler: {failure.phase.errors[0]}"
    if failure.kind == "phase" and failure.phase is not None and failure.phase.interrupted:
        return (
            f"phase {failure.phase.name} interrupted by {failure.phase.interrupted[0]}: "
            "its tests that had not finished have no verdict"
        )
    if failure.kind == "phase" and failure.phase is not None:
        return (
            f"phase {failure.phase.name} ended with returncode {failure.phase.returncode} "
            "but reported no failing test"
        )
    if failure.kind == "child" and failure.child is not None:
        child = failure.child
        name = f"child {child.label or '?'}"
        if failure.nodeid:
            name += f" ({failure.nodeid})"
        return f"{name}: {_exit_text(child)}"
    verdict = failure.verdict
    assert verdict is not None  # a "test" failure always carries its verdict
    why = "poison_skipped, never re-run" if verdict.never_rerun else verdict.outcome
    rc = _rc_text(verdict.record)
    return f"{verdict.nodeid}: {why}" + (f", {rc}" if rc else "")


def failure_details(failure: Failure, analysis: Analysis, tail_lines: int = 80) -> list[str]:
    """The lines under a failure's headline: where it ran, why, and its last output."""
    lines: list[str] = []
    if failure.kind == "test" and failure.verdict is not None:
        lines += _test_details(failure.verdict, analysis)
        if failure.verdict.never_rerun:
            return lines  # it never ran: there is no output to show
        test = failure.verdict.test
        lines += tail_block(test.tail if test is not None else "", tail_lines)
    if failure.child is not None:
        lines += _child_details(failure.child, tail_lines, attached=failure.kind == "test")
    return lines


def _test_details(verdict: Verdict, analysis: Analysis) -> list[str]:
    test = verdict.test
    # A test that never re-ran: its registration knows why it skipped, and on which worker.
    said = (verdict.registration if verdict.never_rerun else None) or verdict.record
    where = [f"phase {verdict.phase or '(none)'}", f"attempt {verdict.attempt}"]
    if test is not None and test.device is not None:
        where.append(f"device {test.device}")
    if said.runtime:
        where.append(f"runtime {said.runtime}")
    if test is not None and test.duration_s is not None:
        where.append(f"{test.duration_s:.1f}s")
    lines = [", ".join(where)]
    if said.worker:
        path = analysis.lifecycle.get((said.run, said.worker), [])
        lifecycle = " -> ".join(path) or "no lifecycle records"
        poisoned = " (this failure poisoned it)" if test is not None and test.poisoned else ""
        lines.append(f"worker {said.worker}: {lifecycle}{poisoned}")
    if verdict.never_rerun:
        registration = said if isinstance(said, PoisonSkipRecord) else None
        reason = _one_line(registration.reason) if registration is not None else ""
        lines.append(f"skipped because: {reason or '(no reason)'}")
        if registration is not None and registration.selector:
            lines.append(f"poison selector: {registration.selector}")
    elif test is not None and test.message:
        lines.append(f"message: {_one_line(test.message)}")
    return lines


def _child_details(child: ChildRecord, tail_lines: int, *, attached: bool) -> list[str]:
    devices = ",".join(map(str, child.devices)) or "?"
    facts = ["never started"] if child.not_run else [f"devices {devices}"]
    if child.duration_s is not None:
        facts.append(f"{child.duration_s:.1f}s")
    if attached:  # under a failed test: say which child job ran it, and how it ended
        facts.insert(0, f"child {child.label}: {_exit_text(child)}")
    lines = [", ".join(facts)]
    if child.reached_summary is False and not child.not_run:
        lines.append("crashed before pytest's summary line")
    if child.log:
        lines.append(f"log: {child.log}")
    # The child's last lines are printed once, in the Resource phase block just above.
    lines.append("output: in the Resource phase block above")
    return lines


def _exit_text(child: ChildRecord) -> str:
    if child.not_run:
        return child.not_run  # it never started: there is no exit to describe
    status = child.signal or f"rc={child.returncode}"
    return status + (" (timed out)" if child.timed_out else "")


def _rc_text(record: TestRecord | PoisonSkipRecord) -> str:
    if not isinstance(record, TestRecord) or record.rc is None:
        return ""  # a registration never ran: no device error
    return f"rc={record.rc}" + (f" at {record.where}" if record.where else "")


def _one_line(text: str) -> str:
    return " ".join(strip_ansi(text).split())
