"""The phases of a run, in order: l2 -> resource -> retry -> report.

Each phase is a small function of the run's context that returns an exit code;
``run_phases`` brackets each with ``phase`` records and runs the later phases
even when an earlier one failed, so a red L2 still gets its retry and report.
A SIGTERM or Ctrl-C stops the children, skips the test phases left and still
reports what finished.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable

from simpler.contract import EXIT_FAILED, EXIT_INFRA, EXIT_OK, EXIT_USAGE
from simpler.orchestrator.context import RunContext
from simpler.orchestrator.l2 import l2_phase
from simpler.orchestrator.leftovers import guarded_run
from simpler.orchestrator.report_phase import report_phase
from simpler.orchestrator.resource import resource_phase
from simpler.orchestrator.retry import retry_phase
from simpler.orchestrator.signals import Interrupted

__all__ = ["PHASES", "run_phases"]

PHASES: dict[str, Callable[[RunContext], int]] = {
    "l2": l2_phase,
    "resource": resource_phase,
    "retry": retry_phase,
    "report": report_phase,
}


def run_phases(ctx: RunContext, phases: list[str]) -> int:
    """Run ``phases`` in order; the report's exit code when it ran, else the worst phase's.

    A usage error (the same in every later phase) or an interruption skips the test phases
    left, never the report; an infrastructure failure (exit 3) outranks the report's verdict.
    """
    results: dict[str, int] = {}
    interrupted: Interrupted | None = None
    with guarded_run(ctx) as guard:
        for name in phases:
            stop_testing = interrupted is not None or EXIT_USAGE in results.values()
            if stop_testing and name != "report":
                continue
            if name == "report":
                guard.tests_over()  # every child stopped, every leftover killed and recorded
            try:
                results[name] = _bracketed(ctx, name, PHASES[name])
            except Interrupted as stop:
                interrupted = stop
                results[name] = EXIT_FAILED
    interrupted = interrupted or guard.interrupted  # one that came during the report counts too
    if interrupted is not None:
        print(f"simpler: interrupted by {interrupted}; children stopped", file=sys.stderr)
        return interrupted.exit_code
    for overriding in (EXIT_INFRA, EXIT_USAGE):
        if overriding in results.values():
            return overriding
    return results.get("report", max(results.values(), default=EXIT_OK))


def _bracketed(ctx: RunContext, name: str, phase: Callable[[RunContext], int]) -> int:
    ctx.current_phase = name
    ctx.write("phase", event="start", shard=ctx.shard)
    started = time.monotonic()
    returncode, interrupted, crash = EXIT_FAILED, None, None
    try:
        returncode = phase(ctx)
    except Interrupted as stop:
        interrupted = stop
    except Exception as error:  # a bug or a broken machine: one line, and the run goes on
        crash = f"{type(error).__name__}: {error}"
        print(f"simpler: phase {name} failed inside simpler: {crash}", file=sys.stderr)
        returncode = EXIT_INFRA
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
        error=crash,
    )
    if interrupted is not None:
        raise interrupted
    return returncode
