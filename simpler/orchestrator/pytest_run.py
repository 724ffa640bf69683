"""Start one pytest process of a phase in the foreground and read its exit as the phase's."""

from __future__ import annotations

import os
import subprocess
import sys

from simpler.ci import gha
from simpler.contract import EXIT_FAILED, EXIT_INFRA, EXIT_OK, EXIT_USAGE
from simpler.contract.child import ChildContract
from simpler.orchestrator.context import RunContext
from simpler.orchestrator.device_handover import POLL_S, DevicesFreed
from simpler.orchestrator.pytest_args import (
    PYTEST_INTERNAL_ERROR,
    PYTEST_NO_TESTS,
    PYTEST_USAGE_ERROR,
)
from simpler.orchestrator.run_coverage import process_ended
from simpler.processes.process import ChildProcess

__all__ = ["l2_plugin_flags", "phase_exit", "run_pytest"]


def run_pytest(
    ctx: RunContext,
    argv: list[str],
    told: ChildContract,
    *,
    distributes: bool = False,
    handover: DevicesFreed | None = None,
) -> int:
    """pytest's own exit code; its output goes straight to ours. ``distributes``: an xdist
    controller, whose workers are measured and not itself (it runs no test). ``handover``:
    what starts once the session has freed its devices, while it ends."""
    sys.stdout.flush()
    try:
        with gha.commands_stopped_while_streaming():
            child = ChildProcess(argv, env={**os.environ, **told.to_env()}, capture=False)
            if handover is not None:
                _wait_to_hand_over(ctx, child, handover)
            returncode = _wait_for_deadline(ctx, child)
            if handover is not None:
                handover.wait_for_named_processes()
    finally:
        if handover is not None:
            handover.print_held_output()  # after the session's stream, commands resumed
    if not distributes and told.coverage is not None:
        process_ended(ctx, told.coverage.label, child.pid, returncode)
    return returncode


def l2_plugin_flags(ctx: RunContext) -> list[str]:
    """What every L2 pytest process, pooled or isolated, asks of the plugin."""
    setup = ctx.setup
    no_recovery = ["--simpler-no-recovery"] if setup.options.no_recovery else []
    only = [f"--simpler-only-tests={setup.only_tests}"] if setup.only_tests is not None else []
    return ["--simpler-class-lines", *no_recovery, *only]


def _wait_to_hand_over(ctx: RunContext, child: ChildProcess, handover: DevicesFreed) -> None:
    """Until the child exits, the deadline is reached or its devices are handed over."""
    deadline = ctx.setup.deadline
    while deadline is None or not deadline.reached:
        try:
            child.wait(timeout=POLL_S)
            return
        except subprocess.TimeoutExpired:
            pass
        if handover.ready():
            try:
                handover.hand_over()
            except BaseException:
                child.stop()  # interrupted in the Resource phase: the session goes too
                raise
            return


def _wait_for_deadline(ctx: RunContext, child: ChildProcess) -> int:
    """The child's exit code; at the deadline it is stopped as a timed-out job is."""
    deadline, phase = ctx.setup.deadline, ctx.state.current_phase
    if deadline is None:
        return child.wait()
    try:
        return child.wait(timeout=deadline.left_s())
    except subprocess.TimeoutExpired:
        ctx.state.cut_by_deadline.add(phase)
        print(f"simpler: {deadline.reason}: stopping phase {phase}", flush=True)
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
