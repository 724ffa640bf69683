"""Start one pytest process of a phase in the foreground and read its exit as the phase's."""

from __future__ import annotations

import os
import subprocess
import sys

from simpler.ci import gha
from simpler.contract import (
    DEADLINE_AT_ENV,
    DURATIONS_ENV,
    EXIT_FAILED,
    EXIT_INFRA,
    EXIT_OK,
    EXIT_USAGE,
)
from simpler.orchestrator.context import RunContext
from simpler.orchestrator.pytest_args import (
    PYTEST_INTERNAL_ERROR,
    PYTEST_NO_TESTS,
    PYTEST_USAGE_ERROR,
    PytestCall,
    pytest_call,
)
from simpler.orchestrator.quarantine_setup import quarantine_env
from simpler.orchestrator.run_coverage import coverage_env, process_ended
from simpler.scheduler.process import ChildProcess

__all__ = ["l2_plugin_flags", "phase_call", "phase_exit", "run_pytest"]


def phase_call(
    ctx: RunContext,
    phase: str,
    devices: list[int] | None,
    *,
    attempt: int,
    extra: list[str],
    user_args: list[str],
) -> PytestCall:
    call = pytest_call(
        phase=phase,
        platform=ctx.platform,
        devices=devices,
        report=str(ctx.report),
        run_id=ctx.run_id,
        attempt=attempt,
        extra=extra,
        user_args=user_args,
    )
    # Every process marks its quarantined tests' records from the one file the run loaded.
    call.env.update(quarantine_env(ctx.test_quarantine))
    return call


def run_pytest(ctx: RunContext, call: PytestCall, label: str, *, distributes: bool = False) -> int:
    """pytest's own exit code; its output goes straight to ours. ``label`` names the process
    in the run's coverage; ``distributes``: an xdist controller, whose workers are measured
    and not itself (it runs no test)."""
    sys.stdout.flush()
    measured = coverage_env(ctx, label, workers_only=distributes)
    env = {**os.environ, **call.env, **measured, **deadline_env(ctx)}
    with gha.commands_stopped_while_streaming():
        child = ChildProcess(call.argv, env=env, capture=False)
        returncode = _wait_for_deadline(ctx, child)
    if not distributes:
        process_ended(ctx, label, child.pid, returncode)
    return returncode


def l2_plugin_flags(ctx: RunContext) -> list[str]:
    """What every L2 pytest process, pooled or isolated, asks of the plugin."""
    no_recovery = ["--simpler-no-recovery"] if ctx.options.no_recovery else []
    only = [f"--simpler-only-tests={ctx.only_tests}"] if ctx.only_tests is not None else []
    return ["--simpler-class-lines", *no_recovery, *only]


def deadline_env(ctx: RunContext) -> dict[str, str]:
    """What a test process needs to start no test that cannot end before the deadline."""
    if ctx.deadline is None:
        return {}
    return {DEADLINE_AT_ENV: f"{ctx.deadline.tests_end_at:.3f}",
            DURATIONS_ENV: str(ctx.durations_file)}  # fmt: skip


def _wait_for_deadline(ctx: RunContext, child: ChildProcess) -> int:
    """The child's exit code; at the deadline it is stopped as a timed-out job is."""
    if ctx.deadline is None:
        return child.wait()
    try:
        return child.wait(timeout=ctx.deadline.left_s())
    except subprocess.TimeoutExpired:
        ctx.cut_by_deadline.add(ctx.current_phase)
        print(f"simpler: {ctx.deadline.reason}: stopping phase {ctx.current_phase}", flush=True)
        child.stop(dump=True)
        return child.wait()


def phase_exit(pytest_rc: int) -> int:
    """pytest's exit code as a phase's: no tests selected is not a failure of the phase, and
    pytest's internal error is no failed test but the run's infrastructure failing (3)."""
    if pytest_rc in (0, PYTEST_NO_TESTS):
        return EXIT_OK
    if pytest_rc == PYTEST_USAGE_ERROR:
        return EXIT_USAGE
    if pytest_rc == PYTEST_INTERNAL_ERROR:
        return EXIT_INFRA
    return EXIT_FAILED
