"""Turn one test's pytest reports into its ``test`` record: outcome, message, tail."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from simpler.errors import DeviceRuntimeError

__all__ = ["TAIL_LINES", "TestTrace", "build_test_record"]

TAIL_LINES = 80
TAIL_CHARS = 16_000  # keeps one record a reasonable line even for huge tracebacks
MESSAGE_CHARS = 300


@dataclass
class TestTrace:
    """What the plugin learns about one test while it runs."""

    reports: list[pytest.TestReport] = field(default_factory=list)
    error: BaseException | None = None  # raised by the test's call
    worker: str | None = None
    runtime: str | None = None
    device: int | None = None
    poisoned: bool = False
    poison_skip_reason: str | None = None


def build_test_record(
    nodeid: str, trace: TestTrace, *, attempt: int, retry_role: str | None
) -> dict[str, Any]:
    outcome, failing = _outcome(trace)
    if outcome == "passed" and retry_role is not None:
        outcome = "recovered" if retry_role == "victim" else "flaky"
    error = trace.error
    device_error = error if isinstance(error, DeviceRuntimeError) else None
    return {
        "type": "test",
        "nodeid": nodeid,
        "outcome": outcome,
        "attempt": attempt,
        "runtime": trace.runtime,
        "device": trace.device,
        "worker": trace.worker,
        "poisoned": trace.poisoned,
        "message": _message(failing, trace),
        "tail": _tail(failing) if failing is not None else "",
        "rc": device_error.rc if device_error else None,
        "where": device_error.where if device_error else None,
        "duration_s": round(sum(r.duration for r in trace.reports), 6),
    }


def _outcome(trace: TestTrace) -> tuple[str, pytest.TestReport | None]:
    """The test's outcome and the report that decided it (None when it passed)."""
    for report in trace.reports:
        if report.failed:
            return ("failed" if report.when == "call" else "error"), report
    for report in trace.reports:
        if report.skipped:
            kind = "poison_skipped" if trace.poison_skip_reason else "skipped"
            return kind, report
    return "passed", None


def _message(report: pytest.TestReport | None, trace: TestTrace) -> str:
    if trace.poison_skip_reason:
        return trace.poison_skip_reason
    if report is None:
        return ""
    if trace.error is not None and report.when == "call":
        text = f"{type(trace.error).__name__}: {trace.error}"
    elif report.skipped and isinstance(report.longrepr, tuple):
        text = str(report.longrepr[2])
    else:
        text = report.longreprtext.strip().splitlines()[-1] if report.longreprtext.strip() else ""
    first_line = text.strip().splitlines()[0] if text.strip() else ""
    return first_line[:MESSAGE_CHARS]


def _tail(report: pytest.TestReport) -> str:
    parts = [report.longreprtext]
    parts += [f"--- {title} ---\n{content}" for title, content in report.sections]
    lines = "\n".join(p for p in parts if p).splitlines()[-TAIL_LINES:]
    return "\n".join(lines)[-TAIL_CHARS:]
