"""Turn one test's pytest reports into its ``test`` record: outcome, message, tail."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import pytest

from simpler.errors import DeviceRuntimeError
from simpler.reporting.records import RecordOrigin, TestRecord

__all__ = [
    "CALL_DEVICE_ERROR",
    "HELD_WORKER",
    "TAIL_LINES",
    "AttemptTrace",
    "HeldWorker",
    "ReportedDeviceError",
    "build_crash_record",
    "build_not_run_record",
    "build_test_record",
]

TAIL_LINES = 80
TAIL_CHARS = 16_000  # keeps one record a reasonable line even for huge tracebacks
MESSAGE_CHARS = 300
# The attribute a setup report carries to the xdist controller: the pooled worker the test
# holds. pytest serializes a report's attributes, so it arrives before the test's call runs.
HELD_WORKER = "simpler_held_worker"
# The attribute a call report carries to the xdist controller: the test's device error, and
# whether its process must end. The process may die in teardown, before any later report.
CALL_DEVICE_ERROR = "simpler_device_error"


@dataclass(frozen=True)
class HeldWorker:
    """The pooled worker a test holds: what the controller needs if that test's process dies."""

    worker: str  # the WorkerKey, as in the lifecycle records
    runtime: str
    device: int

    def as_json(self) -> dict[str, Any]:
        return {"worker": self.worker, "runtime": self.runtime, "device": self.device}

    @classmethod
    def from_json(cls, data: object) -> HeldWorker | None:
        if not isinstance(data, dict):
            return None
        try:
            return cls(str(data["worker"]), str(data["runtime"]), int(data["device"]))
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class ReportedDeviceError:
    """A test's device error as the controller learns it; ``rc`` None: the runner said the
    process must end, but the test raised no device error (it caught it)."""

    rc: int | None
    where: str | None
    message: str
    process_must_end: bool

    def as_json(self) -> dict[str, Any]:
        return {
            "rc": self.rc,
            "where": self.where,
            "message": self.message,
            "process_must_end": self.process_must_end,
        }

    @classmethod
    def from_json(cls, data: object) -> ReportedDeviceError | None:
        if not isinstance(data, dict):
            return None
        try:
            rc = None if data.get("rc") is None else int(data["rc"])
            where = None if data.get("where") is None else str(data["where"])
            ends = bool(data.get("process_must_end", False))
            return cls(rc, where, str(data.get("message", "")), ends)
        except (TypeError, ValueError):
            return None


@dataclass
class AttemptTrace:
    """What the plugin learns about one test while it runs."""

    reports: list[pytest.TestReport] = field(default_factory=list)
    error: BaseException | None = None  # raised by the test's call
    # The test's error as the project's pytest_simpler_device_error hook translated it.
    device_error: DeviceRuntimeError | None = None
    error_translated: bool = False  # the hook was asked already (once per test is enough)
    worker: str | None = None
    pooled: Any = None  # the PooledWorker that served the test (its runner may be rebuilt)
    runtime: str | None = None
    device: int | None = None
    poisoned: bool = False
    poison_skip_reason: str | None = None
    # The kernels it launched, each with the sources its library says it was built from.
    kernels: dict[str, tuple[str, ...]] = field(default_factory=dict)


def build_test_record(
    nodeid: str, trace: AttemptTrace, *, origin: RecordOrigin, attempt: int, retry_role: str | None
) -> TestRecord:
    outcome, telling = _outcome(trace)
    if outcome == "passed" and retry_role is not None:
        outcome = "recovered" if retry_role == "victim" else "flaky"
    error = trace.error
    device_error = trace.device_error
    if device_error is None and isinstance(error, DeviceRuntimeError):
        device_error = error
    record = origin.build(
        TestRecord,
        nodeid=nodeid,
        outcome=outcome,
        attempt=attempt,
        runtime=trace.runtime,
        device=trace.device,
        worker=trace.worker,
        poisoned=trace.poisoned,
        message=_message(telling, trace),
        tail=_tail(telling) if outcome not in ("xfailed", "xpassed") else "",
        rc=device_error.rc if device_error else None,
        where=device_error.where if device_error else None,
        duration_s=round(sum(r.duration for r in trace.reports), 6),
        pid=os.getpid(),  # which process ran it: how many ran at once, from the report
    )
    if trace.kernels:  # device tests only: a device-free record stays as short as it was
        kernels = {name: list(trace.kernels[name]) for name in sorted(trace.kernels)}
        record = record.replace(kernels=kernels)
    return record


def build_crash_record(
    nodeid: str,
    *,
    origin: RecordOrigin,
    xdist_worker: str,
    held: HeldWorker | None,
    device: int | None,
    poisoned: bool,
    down: str,
    attempt: int,
    duration_s: float,
    device_error: ReportedDeviceError | None = None,
) -> TestRecord:
    """The verdict of a test whose xdist worker died under it (written by the controller).

    ``device_error``: what the test's call report said of its device error: the record
    carries its rc and where, and says why when the plugin ended the process on purpose.
    """
    message = f"worker {xdist_worker} crashed while running {nodeid}"
    if device_error is not None and device_error.process_must_end:
        message = _ended_process_message(xdist_worker, device_error)
    elif device_error is not None and device_error.rc is not None:
        message += f" (after rc {device_error.rc} at {device_error.where})"
    holding = (
        f"it held pooled worker {held.worker} on device {held.device}"
        if held is not None
        else f"it held no pooled worker that the controller heard of (device {device})"
    )
    return origin.build(
        TestRecord,
        nodeid=nodeid,
        outcome="failed",
        attempt=attempt,
        runtime=held.runtime if held else None,
        device=held.device if held else device,
        worker=held.worker if held else None,
        poisoned=poisoned,
        message=message[:MESSAGE_CHARS],
        tail=f"{message}\nxdist: node down: {down}\n{holding}"
        + (f"\ndevice error: {device_error.message}" if device_error else ""),
        rc=device_error.rc if device_error else None,
        where=device_error.where if device_error else None,
        duration_s=round(duration_s, 6),
        crashed=nodeid,  # the test its worker crashed under: the history's attribution
    )


def _ended_process_message(xdist_worker: str, error: ReportedDeviceError) -> str:
    """``rc R at W: <device message>; worker gwN ended its process: ...``, the device message
    shortened so that the whole stays within a record's message."""
    head = f"rc {error.rc} at {error.where}: " if error.rc is not None else ""
    tail = (
        f"; worker {xdist_worker} ended its process: nothing in it could stop the op, "
        "a fresh process re-runs the test"
    )
    room = MESSAGE_CHARS - len(head) - len(tail)
    told = error.message or "the test caught the device error"
    if len(told) > room:
        told = told[: max(room - 3, 0)] + "..."
    return head + told + tail


def build_not_run_record(
    nodeid: str, *, origin: RecordOrigin, reason: str, attempt: int
) -> TestRecord:
    """The verdict of a test the session stopped before running: a named failure, not a gap."""
    return origin.build(
        TestRecord,
        nodeid=nodeid,
        outcome="failed",
        attempt=attempt,
        runtime=None,
        device=None,
        worker=None,
        poisoned=False,
        message=reason[:MESSAGE_CHARS],
        tail="",
        rc=None,
        where=None,
        duration_s=0.0,
    )


def _outcome(trace: AttemptTrace) -> tuple[str, list[pytest.TestReport]]:
    """pytest's outcome for the test, and the reports that tell why (none when it passed).

    A call failure followed by a teardown error is ``failed`` (pytest counts both) and keeps
    both reports, so neither message is lost.
    """
    failed = [report for report in trace.reports if report.failed]
    if failed:
        return ("failed" if any(r.when == "call" for r in failed) else "error"), failed
    for report in trace.reports:
        if report.skipped:
            if trace.poison_skip_reason:
                return "poison_skipped", [report]
            return ("xfailed" if hasattr(report, "wasxfail") else "skipped"), [report]
    # A non-strict XPASS passes with the xfail reason attached; a strict one failed above.
    unexpected = [r for r in trace.reports if r.passed and hasattr(r, "wasxfail")]
    if unexpected:
        return "xpassed", unexpected
    return "passed", []


def _message(reports: list[pytest.TestReport], trace: AttemptTrace) -> str:
    if trace.poison_skip_reason:
        return trace.poison_skip_reason
    parts = [_report_message(report, trace) for report in reports]
    if not parts:
        return ""
    # Name the stage of every part after the first: "AssertionError: x; teardown: RuntimeError".
    later = zip(reports[1:], parts[1:], strict=True)
    text = parts[0] + "".join(f"; {report.when}: {part}" for report, part in later)
    return text[:MESSAGE_CHARS]


def _report_message(report: pytest.TestReport, trace: AttemptTrace) -> str:
    """One line, as pytest's short summary says it: ``RuntimeError: setup boom``."""
    if report.failed and report.when == "call" and trace.error is not None:
        text = f"{type(trace.error).__name__}: {trace.error}"
    elif hasattr(report, "wasxfail"):
        word = "XFAIL" if report.skipped else "XPASS"
        text = f"{word} {report.wasxfail}".strip()
    elif report.skipped and isinstance(report.longrepr, tuple):
        text = str(report.longrepr[2])
    else:
        crash = getattr(report.longrepr, "reprcrash", None)
        message = getattr(crash, "message", "")
        lines = report.longreprtext.strip().splitlines()
        text = message or (lines[-1] if lines else "")
    return text.strip().splitlines()[0] if text.strip() else ""


def _tail(reports: list[pytest.TestReport]) -> str:
    parts: list[str] = []
    for report in reports:
        parts.append(report.longreprtext)
        parts += [f"--- {title} ---\n{content}" for title, content in report.sections]
    lines = "\n".join(p for p in parts if p).splitlines()[-TAIL_LINES:]
    return "\n".join(lines)[-TAIL_CHARS:]
