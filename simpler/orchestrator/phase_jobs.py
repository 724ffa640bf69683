"""A phase's children run by the scheduler: what stopped them counts for the whole run."""

from __future__ import annotations

import signal
from collections.abc import Sequence

from simpler.orchestrator.context import RunContext
from simpler.orchestrator.signals import Interrupted
from simpler.scheduler.executor import Execution, ExecutorOptions, execute
from simpler.scheduler.jobs import Job

__all__ = ["execute_for_phase"]


def execute_for_phase(
    ctx: RunContext, phase: str, jobs: Sequence[Job], devices: list[int], options: ExecutorOptions
) -> Execution:
    """``execute``, then: a signal to the orchestrator stops the run (Interrupted), and a job
    the deadline stopped or kept from starting marks ``phase`` as cut by the deadline."""
    execution = execute(jobs, devices, options)
    if execution.stopped_by in ("SIGTERM", "SIGINT"):
        raise Interrupted(signal.Signals[execution.stopped_by])
    if any(result.extra.get("deadline") for result in execution.results):
        ctx.cut_by_deadline.add(phase)
    return execution
