"""The summary's tables and a child's one-line status, as plain text for a renderer.

What each cell says is decided here; how it is marked up is the renderer's:
``simpler.ci.gha`` escapes the cells into GitHub markdown (node ids and logs as code spans)
and wraps the statuses in workflow commands. Pure: records in, text out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from simpler.contract import strip_ansi
from simpler.reporting.records import ChildRecord, Record
from simpler.reporting.resource_block import (
    child_failed,
    describe_exit,
    devices_text,
    latest_children,
)
from simpler.reporting.verdicts import Failure, Verdict

__all__ = [
    "MESSAGE_CHARS",
    "ChildRow",
    "FailureRow",
    "child_annotation",
    "child_rows",
    "child_status",
    "failure_rows",
]

MESSAGE_CHARS = 200  # one table cell: the first line of a message, not a traceback


@dataclass(frozen=True)
class FailureRow:
    """One unrecovered failure: what failed, how, where it ran, for how long, its log."""

    label: str  # a child's label or ``phase NAME``; empty for a test, named by its node id
    nodeid: str  # the failed test's node id, or empty
    result: str
    devices: str
    duration_s: float | None
    log: str


@dataclass(frozen=True)
class ChildRow:
    """One Resource child, as its latest record says it ended."""

    label: str
    failed: bool
    result: str
    devices: str
    duration_s: float | None
    log: str


def failure_rows(failures: Sequence[Failure]) -> list[FailureRow]:
    return [_failure_row(failure) for failure in failures]


def child_rows(records: Iterable[Record]) -> list[ChildRow]:
    """A row per child label, its latest record deciding, in the order the labels came."""
    return [
        ChildRow(
            child.label or "?",
            child_failed(child),
            describe_exit(child) if child_failed(child) else "passed",
            devices_text(child),
            child.duration_s,
            child.log,
        )
        for child in latest_children(records)
    ]


def child_status(child: ChildRecord) -> str:
    """``PASS rc=0 devices=4,5``, ``FAIL signal=SIGSEGV devices=4,5``, ``FAIL timeout ...``."""
    parts = ["FAIL" if child_failed(child) else "PASS"]
    if child.timed_out:
        parts.append("timeout")
    parts.append(_rc_or_signal(child))
    parts.append(f"devices={devices_text(child)}")
    return " ".join(parts)


def child_annotation(child: ChildRecord) -> str:
    """A failed child in one line: ``two_cards rc=1 devices=4,5`` (and how, when it timed
    out or crashed)."""
    message = f"{child.label or '?'} {_rc_or_signal(child)} devices={devices_text(child)}"
    if child.timed_out or child.reached_summary is False:
        message += f" ({describe_exit(child)})"  # timed out / crashed: say which
    return message


def _failure_row(failure: Failure) -> FailureRow:
    if failure.kind == "phase" and failure.phase is not None:
        phase = failure.phase
        result = f"returncode {phase.returncode}, no failing test reported"
        return FailureRow(f"phase {phase.name}", "", result, "", phase.duration_s, "")
    child, verdict = failure.child, failure.verdict
    if failure.kind == "test" and verdict is not None:
        label, nodeid, result = "", verdict.nodeid, _test_result(verdict)
        if child is not None:  # it ran in a child job: that job's facts locate it
            result += f"; child {child.label or '?'}: {describe_exit(child)}"
    else:
        assert child is not None  # a "child" failure always carries its child record
        label, nodeid, result = child.label or "?", failure.nodeid, describe_exit(child)
    if child is not None:  # else its test's record, if one decided: a registration has no cells
        return FailureRow(label, nodeid, result, devices_text(child), child.duration_s, child.log)
    test = verdict.test if verdict is not None else None
    device = test.device if test is not None else None
    seconds = test.duration_s if test is not None else None
    return FailureRow(label, nodeid, result, "" if device is None else str(device), seconds, "")


def _test_result(verdict: Verdict) -> str:
    if verdict.never_rerun:
        reason = _first_line(verdict.skip_reason)
        return "poison_skipped, never re-run" + (f": {reason}" if reason else "")
    message = _first_line(verdict.test.message if verdict.test is not None else "")
    return f"{verdict.outcome}: {message}" if message else verdict.outcome


def _first_line(text: str) -> str:
    line = next((part.strip() for part in strip_ansi(text).splitlines() if part.strip()), "")
    return line if len(line) <= MESSAGE_CHARS else line[: MESSAGE_CHARS - 3] + "..."


def _rc_or_signal(record: ChildRecord) -> str:
    return f"signal={record.signal}" if record.signal else f"rc={record.returncode}"
