"""The phases of a run, in order: l2 -> resource -> retry -> report.

Each phase is a small function of the run's context that returns an exit code;
``run_phases`` brackets each with ``phase`` records and runs the later phases
even when an earlier one failed, so a red L2 still gets its retry and report.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from simpler import report as report_file
from simpler.pytest_command import (
    PYTEST_NO_TESTS,
    PYTEST_USAGE_ERROR,
    PytestCall,
    pytest_call,
    requested_xdist_workers,
    without_selection,
)
from simpler.summary import summarize

__all__ = ["PHASE_ORDER", "RunContext", "run_phases"]

PHASE_ORDER = ("l2", "resource", "retry", "report")
RETRY_ATTEMPTS = (2, 3)  # the triggering test's extra attempts, each on a clean card
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INFRA = 0, 1, 2, 3


@dataclass
class RunContext:
    platform: str
    devices: list[int]
    report: Path
    run_id: str
    pytest_args: list[str] = field(default_factory=list)
    fail_on_flaky: bool = False
    max_parallel: int | None = None
    recovery: bool = True
    tail_lines: int = 80

    def records(self) -> list[report_file.Record]:
        """This run's records so far (an unreadable file reads as none)."""
        try:
            contents = report_file.read_contents(self.report)
        except report_file.ReportUnreadable:
            return []
        return [r for r in contents.records if r.get("run") == self.run_id]

    def write(self, record_type: str, **fields: object) -> None:
        record = report_file.make_record(record_type, **fields)
        record["run"] = self.run_id
        report_file.append(self.report, record)


def run_phases(ctx: RunContext, phases: list[str]) -> int:
    """Run ``phases`` in order; the report's exit code when it ran, else the worst phase's."""
    results: dict[str, int] = {}
    for name in phases:
        results[name] = _bracketed(ctx, name, PHASES[name])
        if results[name] == EXIT_USAGE:
            return EXIT_USAGE  # a usage error is the same in every later phase
    if "report" in results:
        return results["report"]
    return max(results.values(), default=EXIT_OK)


def _bracketed(ctx: RunContext, name: str, phase: Callable[[RunContext], int]) -> int:
    ctx.write("phase", phase=name, event="start")
    started = time.monotonic()
    returncode = phase(ctx)
    counts = Counter(
        r["outcome"] for r in ctx.records() if r.get("type") == "test" and r.get("phase") == name
    )
    ctx.write(
        "phase",
        phase=name,
        event="end",
        counts=dict(counts),
        returncode=returncode,
        duration_s=round(time.monotonic() - started, 3),
    )
    return returncode


def l2_phase(ctx: RunContext) -> int:
    """The pooled tests, one device per xdist worker (``gwN`` -> Nth device)."""
    extra: list[str] = ["--class-lines"]
    if not ctx.recovery:
        extra.append("--no-recovery")
    if requested_xdist_workers(ctx.pytest_args) is None:
        workers = min(len(ctx.devices), ctx.max_parallel or len(ctx.devices))
        if workers > 1:
            extra += ["-n", str(workers), "--dist", "loadfile"]
    call = _call(ctx, "l2", ctx.devices, attempt=1, extra=extra, user_args=ctx.pytest_args)
    return _phase_exit(_run_pytest(call))


def resource_phase(ctx: RunContext) -> int:
    """Placeholder until the scheduler lands: nothing is marked for it yet in this run."""
    return EXIT_OK


def retry_phase(ctx: RunContext) -> int:
    """Fresh processes for the poison-skipped tests and for each test that poisoned its worker."""
    records = ctx.records()
    victims = _poison_skipped(records)
    triggers = _poison_triggers(records)
    flags = without_selection(ctx.pytest_args)
    worst = EXIT_OK
    if victims:
        call = _call(
            ctx,
            "retry",
            ctx.devices[:1],
            attempt=2,
            extra=["--simpler-retry-role", "victim", *victims],
            user_args=flags,
        )
        worst = max(worst, _phase_exit(_run_pytest(call)))
    for nodeid in triggers:
        worst = max(worst, _retry_trigger(ctx, nodeid, flags))
    return worst


def _retry_trigger(ctx: RunContext, nodeid: str, flags: list[str]) -> int:
    """Up to two more attempts, each in a process of its own so a second fault stays contained."""
    for attempt in RETRY_ATTEMPTS:
        call = _call(
            ctx,
            "retry",
            ctx.devices[:1],
            attempt=attempt,
            extra=["--simpler-retry-role", "trigger", nodeid],
            user_args=flags,
        )
        if _phase_exit(_run_pytest(call)) == EXIT_OK:
            return EXIT_OK
    return EXIT_FAILED


def _poison_skipped(records: list[report_file.Record]) -> list[str]:
    """Selected from the ``poison_skip`` registrations only, never from plain skips."""
    return list(dict.fromkeys(r["nodeid"] for r in records if r.get("type") == "poison_skip"))


def _poison_triggers(records: list[report_file.Record]) -> list[str]:
    return list(
        dict.fromkeys(
            r["nodeid"]
            for r in records
            if r.get("type") == "test"
            and r.get("poisoned")
            and r.get("outcome") in ("failed", "error")
            and r.get("phase") != "retry"
        )
    )


def report_phase(ctx: RunContext) -> int:
    try:
        contents = report_file.read_contents(ctx.report)
    except report_file.ReportUnreadable as error:
        print(f"simpler: {error}", file=sys.stderr)
        return EXIT_INFRA
    records = [r for r in contents.records if r.get("run") == ctx.run_id]
    # This phase's own end record is not written yet: do not call the run incomplete for it.
    records = [r for r in records if not (r.get("type") == "phase" and r.get("phase") == "report")]
    summary = summarize(
        records,
        malformed=contents.malformed,
        fail_on_flaky=ctx.fail_on_flaky,
        tail_lines=ctx.tail_lines,
    )
    sys.stdout.flush()
    print(summary.text, flush=True)
    return summary.exit_code


PHASES: dict[str, Callable[[RunContext], int]] = {
    "l2": l2_phase,
    "resource": resource_phase,
    "retry": retry_phase,
    "report": report_phase,
}


def _call(
    ctx: RunContext,
    phase: str,
    devices: list[int],
    *,
    attempt: int,
    extra: list[str],
    user_args: list[str],
) -> PytestCall:
    return pytest_call(
        phase=phase,
        platform=ctx.platform,
        devices=devices,
        report=str(ctx.report),
        run_id=ctx.run_id,
        attempt=attempt,
        extra=extra,
        user_args=user_args,
    )


def _run_pytest(call: PytestCall) -> int:
    sys.stdout.flush()
    return subprocess.run(call.argv, env={**os.environ, **call.env}, check=False).returncode


def _phase_exit(pytest_rc: int) -> int:
    """pytest's exit code as a phase's: no tests selected is not a failure of the phase."""
    if pytest_rc in (0, PYTEST_NO_TESTS):
        return EXIT_OK
    if pytest_rc == PYTEST_USAGE_ERROR:
        return EXIT_USAGE
    return EXIT_FAILED
