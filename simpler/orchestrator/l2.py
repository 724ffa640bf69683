"""The L2 phase: the pooled tests under xdist, one device per xdist worker (``gwN`` -> Nth)."""

from __future__ import annotations

from collections import Counter

from simpler.contract import EXIT_OK
from simpler.orchestrator.context import RunContext
from simpler.orchestrator.isolated import isolated_l2_phase
from simpler.orchestrator.pytest_args import l2_user_args, l2_xdist_flags
from simpler.orchestrator.pytest_run import l2_plugin_flags, phase_call, phase_exit, run_pytest
from simpler.reporting.nodeids import file_of
from simpler.reporting.records import TestRecord
from simpler.scheduler.durations import record_durations
from simpler.scheduler.locks import hold_devices

__all__ = ["l2_phase"]


def l2_phase(ctx: RunContext) -> int:
    """The L2 tests in at most two passes: the pooled ones under xdist on the devices, then
    the ones that use no device with the user's own flags, as plain pytest would run them
    (a device worker per xdist worker would only slow them down)."""
    if ctx.l2_files is not None and not ctx.l2_files:
        return EXIT_OK  # this shard's tests are all Resource tests
    if ctx.isolate is not None and ctx.l2_tests is not None:
        worst = isolated_l2_phase(ctx)
        _record_file_durations(ctx)
        return worst
    # Not collected up front: one pass, every test taken as pooled.
    parts = ctx.l2_parts if ctx.l2_parts is not None else ("pooled",)
    worst = EXIT_OK
    for part in parts:
        # With both kinds present, each pass keeps only its own tests.
        part_flags = ["--simpler-l2-part", part] if len(parts) > 1 or part == "plain" else []
        run = _pooled_pass if part == "pooled" else _plain_pass
        worst = max(worst, run(ctx, part_flags=part_flags))
    _record_file_durations(ctx)
    return worst


def _pooled_pass(ctx: RunContext, *, part_flags: list[str]) -> int:
    # One xdist worker per device, whether simpler sizes it or the user asked for -n auto.
    workers = min(len(ctx.devices), ctx.options.max_parallel or len(ctx.devices))
    extra = [*l2_plugin_flags(ctx), *part_flags, *l2_xdist_flags(ctx.pytest_args, workers)]
    user_args = l2_user_args(ctx.pytest_args, workers, ctx.l2_files)
    call = phase_call(ctx, "l2", ctx.devices, attempt=1, extra=extra, user_args=user_args)
    numprocesses = ctx.pytest_args.numprocesses
    distributes = numprocesses != "0" if numprocesses is not None else workers > 1
    with hold_devices(ctx.devices):
        return phase_exit(run_pytest(ctx, call, "L2 pass", distributes=distributes))


def _plain_pass(ctx: RunContext, *, part_flags: list[str]) -> int:
    user_args = l2_user_args(ctx.pytest_args, None, ctx.l2_files)
    extra = [*l2_plugin_flags(ctx), *part_flags]
    call = phase_call(ctx, "l2", ctx.devices, attempt=1, extra=extra, user_args=user_args)
    return phase_exit(run_pytest(ctx, call, "L2 pass of the tests that use no device"))


def _record_file_durations(ctx: RunContext) -> None:
    """What each L2 file took, so the next ``--shard`` split balances on it."""
    per_file: Counter[str] = Counter()
    for record in ctx.records():
        if isinstance(record, TestRecord) and record.phase == "l2":
            per_file[f"file:{file_of(record.nodeid)}"] += record.raw.get("duration_s") or 0
    record_durations(ctx.durations_file, per_file.items())
