"""A phase's children run by the scheduler: what stopped them counts for the whole run, and a
child forked from the warm process that died before any verdict gets one fresh interpreter."""

from __future__ import annotations

import signal
from collections.abc import Callable, Sequence
from dataclasses import replace

from simpler.orchestrator.context import RunContext
from simpler.orchestrator.run_coverage import result_ended
from simpler.orchestrator.signals import Interrupted
from simpler.scheduler.executor import Execution, ExecutorOptions, execute
from simpler.scheduler.jobs import Job, JobResult

__all__ = ["ForkCrashes", "execute_for_phase"]


class ForkCrashes:
    """How a phase tells a forked child that died before any verdict of its own: ``verdict``
    says whether the job's tests reported anything; ``label`` names it in the coverage."""

    def __init__(
        self, verdict: Callable[[JobResult], bool], label: Callable[[JobResult], str]
    ) -> None:
        self.verdict = verdict
        self.label = label


def execute_for_phase(
    ctx: RunContext,
    phase: str,
    jobs: Sequence[Job],
    devices: list[int],
    options: ExecutorOptions,
    *,
    fork_crashes: ForkCrashes | None = None,
    recorded: Callable[[Execution], None] | None = None,
) -> Execution:
    """``execute``, then: a forked child that died of a signal before any verdict is named and
    run once more in a fresh interpreter (``fork_crashes``); ``recorded`` sees every result; a
    signal to the orchestrator stops the run (Interrupted); a job the deadline stopped or kept
    from starting marks ``phase`` as cut by the deadline."""
    held: list[JobResult] = []
    finish = options.on_finish
    ctx.children.started_any = ctx.children.started_any or bool(jobs)  # the summary says how

    def finished_or_held(result: JobResult) -> None:
        if fork_crashes is not None and _forked_crash(ctx, result, fork_crashes):
            held.append(result)
            result_ended(ctx, result, fork_crashes.label(result))
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
        quarantined = sorted({*execution.quarantined, *second.quarantined})
        execution = replace(second, results=[*kept, *second.results], quarantined=quarantined)
    if recorded is not None:
        recorded(execution)
    if execution.stopped_by in ("SIGTERM", "SIGINT"):
        raise Interrupted(signal.Signals[execution.stopped_by])
    if any(result.extra.get("deadline") for result in execution.results):
        ctx.cut_by_deadline.add(phase)
    return execution


def _forked_crash(ctx: RunContext, result: JobResult, crashes: ForkCrashes) -> bool:
    crashed = result.signal is not None and not result.timed_out and not result.extra
    return crashed and ctx.children.forking and not crashes.verdict(result)
