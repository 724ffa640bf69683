"""The L2 phase: the pooled tests under xdist, one device per xdist worker (``gwN`` -> Nth)."""

from __future__ import annotations

from collections import Counter

from simpler.contract import EXIT_OK
from simpler.orchestrator.context import RunContext
from simpler.orchestrator.pytest_args import requested_xdist_workers, without_selection
from simpler.orchestrator.pytest_run import phase_call, phase_exit, run_pytest
from simpler.reporting.nodeids import file_of
from simpler.scheduler.durations import record_durations
from simpler.scheduler.locks import hold_devices

__all__ = ["l2_phase"]


def l2_phase(ctx: RunContext) -> int:
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
    call = phase_call(ctx, "l2", ctx.devices, attempt=1, extra=extra, user_args=user_args)
    with hold_devices(ctx.devices):
        returncode = phase_exit(run_pytest(call))
    _record_file_durations(ctx)
    return returncode


def _record_file_durations(ctx: RunContext) -> None:
    """What each L2 file took, so the next ``--shard`` split balances on it."""
    per_file: Counter[str] = Counter()
    for record in ctx.records():
        if record.get("type") == "test" and record.get("phase") == "l2":
            per_file[f"file:{file_of(str(record['nodeid']))}"] += record.get("duration_s") or 0
    record_durations(ctx.durations_file, per_file.items())
