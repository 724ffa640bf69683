"""The phases of a run, in order: l2 -> resource -> retry -> report.

Each phase is a small function of the run's context that returns an exit code;
``run_phases`` brackets each with ``phase`` records and runs the later phases
even when an earlier one failed, so a red L2 still gets its retry and report.
A SIGTERM or Ctrl-C stops the children, skips the test phases left and still
reports what finished.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from simpler import report as report_file
from simpler.nodeids import file_of
from simpler.pytest_command import (
    PYTEST_NO_TESTS,
    PYTEST_USAGE_ERROR,
    PytestCall,
    pytest_call,
    requested_xdist_workers,
    without_selection,
)
from simpler.scheduler.locks import hold_devices
from simpler.scheduler.process import LIVE, ChildProcess

if TYPE_CHECKING:
    from simpler.collection import ResourceTest
    from simpler.scheduler.jobs import JobResult

__all__ = ["PHASE_ORDER", "Interrupted", "RunContext", "run_phases"]

PHASE_ORDER = ("l2", "resource", "retry", "report")
RETRY_ATTEMPTS = (2, 3)  # the triggering test's extra attempts, each on a clean card
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INFRA = 0, 1, 2, 3


class Interrupted(Exception):
    """The orchestrator got SIGTERM or SIGINT: stop the children, report what finished."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


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
    policy: str = "backfill"
    job_timeout_s: float | None = None
    session_timeout_s: float | None = None
    exit_first: bool = False
    junit: Path | None = None
    resource_tests: list[ResourceTest] | None = None  # collected up front by the CLI
    l2_files: list[str] | None = None  # this shard's L2 files; None: the user's selection
    shard: str | None = None
    current_phase: str = ""

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
        record["phase"] = record.get("phase") or self.current_phase
        report_file.append(self.report, record)

    def announce_child(self, result: JobResult) -> None:
        from simpler.child_output import announce

        announce(result)


def run_phases(ctx: RunContext, phases: list[str]) -> int:
    """Run ``phases`` in order; the report's exit code when it ran, else the worst phase's."""
    results: dict[str, int] = {}
    interrupted: Interrupted | None = None
    with _signals_raise_interrupted():
        for name in phases:
            if interrupted is not None and name != "report":
                continue
            try:
                results[name] = _bracketed(ctx, name, PHASES[name])
            except Interrupted as stop:
                interrupted = stop
                results[name] = EXIT_FAILED
            if results[name] == EXIT_USAGE:
                return EXIT_USAGE  # a usage error is the same in every later phase
    if interrupted is not None:
        print(f"simpler: interrupted by {interrupted}; children stopped", file=sys.stderr)
        return max(results.get("report", EXIT_FAILED), EXIT_FAILED)
    if "report" in results:
        return results["report"]
    return max(results.values(), default=EXIT_OK)


@contextmanager
def _signals_raise_interrupted() -> Iterator[None]:
    def interrupt(signum: int, _frame: FrameType | None) -> None:
        LIVE.stop_all()
        raise Interrupted(signum)

    previous = {s: signal.signal(s, interrupt) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        LIVE.stop_all()  # no process outlives the run
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _bracketed(ctx: RunContext, name: str, phase: Callable[[RunContext], int]) -> int:
    ctx.current_phase = name
    ctx.write("phase", event="start", shard=ctx.shard)
    started = time.monotonic()
    returncode, interrupted = EXIT_FAILED, None
    try:
        returncode = phase(ctx)
    except Interrupted as stop:
        interrupted = stop
    counts = Counter(
        r["outcome"] for r in ctx.records() if r.get("type") == "test" and r.get("phase") == name
    )
    ctx.write(
        "phase",
        event="end",
        counts=dict(counts),
        returncode=returncode,
        duration_s=round(time.monotonic() - started, 3),
        interrupted=str(interrupted) if interrupted else None,
    )
    if interrupted is not None:
        raise interrupted
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
    user_args = ctx.pytest_args
    if ctx.l2_files is not None:
        if not ctx.l2_files:
            return EXIT_OK  # this shard's tests are all Resource tests
        user_args = [*without_selection(ctx.pytest_args), *ctx.l2_files]
    call = _call(ctx, "l2", ctx.devices, attempt=1, extra=extra, user_args=user_args)
    with hold_devices(ctx.devices):
        returncode = _phase_exit(_run_pytest(call))
    _record_file_durations(ctx)
    return returncode


def _record_file_durations(ctx: RunContext) -> None:
    """What each L2 file took, so the next ``--shard`` split balances on it."""
    from simpler.scheduler.durations import record_durations

    per_file: Counter[str] = Counter()
    for record in ctx.records():
        if record.get("type") == "test" and record.get("phase") == "l2":
            per_file[f"file:{file_of(str(record['nodeid']))}"] += record.get("duration_s") or 0
    record_durations(ctx.report.parent / "durations.json", per_file.items())


def resource_phase(ctx: RunContext) -> int:
    from simpler.resource_phase import run_resource_phase

    return run_resource_phase(ctx)


def retry_phase(ctx: RunContext) -> int:
    """Fresh processes for the poison-skipped tests and for each test that poisoned its worker."""
    from simpler.resource_phase import quarantined_devices

    records = ctx.records()
    victims = _poison_skipped(records)
    triggers = _poison_triggers(records)
    flags = without_selection(ctx.pytest_args)
    # A fresh process sees a clean card, but prefer one that was never quarantined.
    clean = [d for d in ctx.devices if d not in quarantined_devices(records)] or ctx.devices
    worst = EXIT_OK
    if not victims and not triggers:
        return worst
    with hold_devices(clean[:1]):
        if victims:
            extra = ["--simpler-retry-role", "victim", *victims]
            call = _call(ctx, "retry", clean[:1], attempt=2, extra=extra, user_args=flags)
            worst = max(worst, _phase_exit(_run_pytest(call)))
        for nodeid in triggers:
            worst = max(worst, _retry_trigger(ctx, nodeid, flags, clean[:1]))
    return worst


def _retry_trigger(ctx: RunContext, nodeid: str, flags: list[str], device: list[int]) -> int:
    """Up to two more attempts, each in a process of its own so a second fault stays contained."""
    for attempt in RETRY_ATTEMPTS:
        extra = ["--simpler-retry-role", "trigger", nodeid]
        call = _call(ctx, "retry", device, attempt=attempt, extra=extra, user_args=flags)
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
    from simpler.report_output import ReportOptions, print_report

    # This phase's own end record is not written yet: do not call the run incomplete for it.
    def this_run(record: report_file.Record) -> bool:
        own = record.get("type") == "phase" and record.get("phase") == "report"
        return record.get("run") == ctx.run_id and not own

    options = ReportOptions(
        fail_on_flaky=ctx.fail_on_flaky, tail_lines=ctx.tail_lines, junit=ctx.junit
    )
    return print_report([ctx.report], options, keep=this_run)


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
    child = ChildProcess(call.argv, env={**os.environ, **call.env}, capture=False)
    return child.wait()


def _phase_exit(pytest_rc: int) -> int:
    """pytest's exit code as a phase's: no tests selected is not a failure of the phase."""
    if pytest_rc in (0, PYTEST_NO_TESTS):
        return EXIT_OK
    if pytest_rc == PYTEST_USAGE_ERROR:
        return EXIT_USAGE
    return EXIT_FAILED
