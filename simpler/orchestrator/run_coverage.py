"""A run's coverage as the orchestrator keeps it: each process it starts is measured (it is
told so, ``RunSetup.child``), and how each ended is recorded, so the report can say whose data
is missing or partial and why."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from simpler.coverage.process_env import RunCoverage
from simpler.processes.process import signal_name
from simpler.reporting.records import CoverageRecord
from simpler.scheduler.jobs import JobResult

if TYPE_CHECKING:
    from simpler.orchestrator.context import RunContext

__all__ = ["process_ended", "result_ended", "run_record"]


def run_record(ctx: RunContext, coverage: RunCoverage) -> CoverageRecord:
    """The run's ``coverage`` record: what it asked for, where its data lies, and its root, so
    that a merge of several checkouts maps their paths onto one."""
    data_dir = os.path.relpath(coverage.data_dir, ctx.setup.report.parent)
    record = ctx.record(CoverageRecord, event="run", root=os.getcwd(), data_dir=data_dir)
    return coverage.options.add_to(record)


def process_ended(ctx: RunContext, label: str, pid: int, returncode: int) -> None:
    """A measured process the run started in the foreground (an L2 pass) has ended."""
    if ctx.setup.coverage is not None:
        _write_ended(ctx, label, pid, _why(signal_name(returncode), timed_out=False))


def result_ended(ctx: RunContext, result: JobResult, label: str) -> None:
    """A measured child of the scheduler (Resource, retry) named ``label`` has ended; one that
    never started was to write nothing."""
    if (
        ctx.setup.coverage is not None
        and result.pid is not None
        and not result.extra.get("not_run")
    ):
        why = _why(result.signal, timed_out=result.timed_out)
        if result.extra.get("deadline"):
            why = "stopped at the deadline"
        _write_ended(ctx, label, result.pid, why)


def _why(signal: str | None, *, timed_out: bool) -> str | None:
    """Why a process's data may stop short: None when it ended by itself (pass or fail)."""
    if timed_out:
        return "killed at the job timeout"
    return f"killed by {signal}" if signal else None


def _write_ended(ctx: RunContext, label: str, pid: int, why: str | None) -> None:
    ctx.write(ctx.record(CoverageRecord, event="ended", label=label, pid=pid, why=why))
