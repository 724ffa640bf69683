"""A phase's children run by the scheduler: what stopped them counts for the whole run, and a
child forked from the warm process that died before any verdict gets one fresh interpreter."""

from __future__ import annotations

import signal
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from simpler.base.nodeids import file_of
from simpler.orchestrator.context import RunContext
from simpler.orchestrator.run_coverage import result_ended
from simpler.orchestrator.signals import Interrupted
from simpler.processes.executor import Execution, ExecutorOptions, execute
from simpler.reporting.records import ChildRecord, TestRecord
from simpler.scheduler.jobs import Job, JobResult

__all__ = ["child_record", "execute_for_phase"]


def executor_options(
    ctx: RunContext,
    *,
    estimate: Callable[[Job], float],
    on_finish: Callable[[JobResult], None],
    **more: Any,
) -> ExecutorOptions:
    """How a phase's jobs run: in the run's slots, children started as the run starts them,
    logs beside the report, within what is left of the deadline; ``more``: the phase's own."""
    setup = ctx.setup
    return ExecutorOptions(
        estimate=estimate,
        tail_lines=setup.options.tail_lines,
        log_dir=setup.report.parent / "logs",
        on_finish=on_finish,
        deadline_s=setup.deadline.left_s() if setup.deadline is not None else None,
        slots=setup.slots,
        launcher=ctx.children.launcher,
        **more,
    )


def execute_for_phase(
    ctx: RunContext,
    phase: str,
    jobs: Sequence[Job],
    devices: list[int],
    options: ExecutorOptions,
    *,
    coverage_label: Callable[[JobResult], str] | None = None,
    recorded: Callable[[Execution], None] | None = None,
) -> Execution:
    """``execute``, then: a forked child that died of a signal before any test of its job (a
    node id, or an isolated file) had a verdict is named and run once more in a fresh
    interpreter, when the phase names its children in the coverage (``coverage_label``);
    ``recorded`` sees every result; a
    signal to the orchestrator stops the run (Interrupted); a job the deadline stopped or kept
    from starting marks ``phase`` as cut by the deadline."""
    held: list[JobResult] = []
    finish = options.on_finish
    ctx.children.started_any = ctx.children.started_any or bool(jobs)  # the summary says how

    def finished_or_held(result: JobResult) -> None:
        if coverage_label is not None and _forked_crash(ctx, phase, result):
            held.append(result)
            result_ended(ctx, result, coverage_label(result))
            print(f"simpler: {result.label}: its child, forked from the warm process, died of "
                  f"{result.signal} before its test's verdict; running it once more in a fresh "
                  "interpreter", flush=True)  # fmt: skip
        elif finish is not None:
            finish(result)

    execution = execute(jobs, devices, replace(options, on_finish=finished_or_held))
    if held and execution.stopped_by is None:
        again = [job for job in jobs if job.label in {r.label for r in held}]
        second = execute(again, devices, replace(options, launcher=None))
        ctx.children.notes.append(f"{len(again)} run again in a fresh interpreter after a crash")
        kept = [r for r in execution.results if r not in held]
        retired = sorted({*execution.retired, *second.retired})
        most = max(execution.most_at_once, second.most_at_once)
        execution = replace(
            second, results=[*kept, *second.results], retired=retired, most_at_once=most
        )
    ctx.state.phase_slots[phase] = max(ctx.state.phase_slots.get(phase, 0), execution.most_at_once)
    if recorded is not None:
        recorded(execution)
    if execution.stopped_by in ("SIGTERM", "SIGINT"):
        raise Interrupted(signal.Signals[execution.stopped_by])
    if any(result.extra.get("deadline") for result in execution.results):
        ctx.state.cut_by_deadline.add(phase)
    return execution


def child_record(ctx: RunContext, result: JobResult) -> ChildRecord:
    """The ``child`` record of a child that ended: how, on which devices, where its output is."""
    return ctx.record(
        ChildRecord,
        label=result.label,
        nodeid=result.nodeid,
        returncode=result.returncode,
        signal=result.signal,
        devices=result.devices,
        duration_s=result.duration_s,
        timed_out=result.timed_out,
        reached_summary=result.reached_summary,
        tail=result.tail,
        log=result.log,
    )


def _forked_crash(ctx: RunContext, phase: str, result: JobResult) -> bool:
    crashed = result.signal is not None and not result.timed_out and not result.extra
    return crashed and ctx.children.forking and not _reported(ctx, phase, result)


def _reported(ctx: RunContext, phase: str, result: JobResult) -> bool:
    """A test of the job (its node id, or the file an isolated unit is) has a record."""
    unit = result.nodeid or result.label
    return any(
        isinstance(r, TestRecord) and r.phase == phase and unit in (r.nodeid, file_of(r.nodeid))
        for r in ctx.records()
    )  # fmt: skip
