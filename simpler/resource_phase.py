"""The Resource phase: one child pytest per ``device_count`` test, placed by the scheduler.

Each child gets its devices as ``--device 4-5`` and ``SIMPLER_DEVICES=4,5``; its
output streams to ``<report dir>/logs/<label>.log``; its end becomes a ``child``
record the moment it is known, so a killed orchestrator loses no finished child.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import TYPE_CHECKING, Any

from simpler.collection import ListingError, ResourceTest, collect_suite
from simpler.pytest_command import without_selection
from simpler.scheduler.jobs import Job, JobResult

if TYPE_CHECKING:
    from simpler.phases import RunContext

__all__ = ["quarantined_devices", "run_resource_phase"]


def quarantined_devices(records: list[dict[str, Any]]) -> set[int]:
    """Devices whose worker could not be reset in this run (lifecycle ``give_up``)."""
    return {
        int(r["device"])
        for r in records
        if r.get("type") == "lifecycle"
        and r.get("dest") == "skipped"
        and r.get("device") is not None
    }


def run_resource_phase(ctx: RunContext) -> int:
    from simpler.scheduler.durations import estimator, load_durations, record_durations
    from simpler.scheduler.executor import ExecutorOptions, execute

    tests = ctx.resource_tests
    if tests is None:
        try:
            tests = collect_suite(ctx.platform, ctx.devices, ctx.pytest_args).resource
        except (ListingError, ValueError) as error:
            print(f"simpler: {error}", flush=True)
            return 1
    if not tests:
        return 0
    durations_path = ctx.report.parent / "durations.json"
    already = quarantined_devices(ctx.records())
    pool = [d for d in ctx.devices if d not in already]
    jobs = [_job(ctx, t) for t in tests]
    options = ExecutorOptions(
        estimate=estimator(load_durations(durations_path)),
        policy=ctx.policy,
        job_timeout_s=ctx.job_timeout_s,
        session_timeout_s=ctx.session_timeout_s,
        exit_first=ctx.exit_first,
        tail_lines=ctx.tail_lines,
        log_dir=ctx.report.parent / "logs",
        env={**os.environ, **_child_env(ctx)},
        on_finish=lambda result: _finished(ctx, result),
        quarantine=lambda result: sorted(quarantined_devices(ctx.records()) & set(result.devices)),
    )
    if already:
        ctx.write("quarantine", devices=sorted(already), reason="worker could not be reset in L2")
    if not pool:
        print("simpler: every device is quarantined; the Resource phase cannot run", flush=True)
        return 1
    execution = execute(jobs, pool, options)
    record_durations(durations_path, [(r.label, r.duration_s) for r in execution.results if r.ok])
    if execution.stopped_by in ("SIGTERM", "SIGINT"):
        from simpler.phases import Interrupted

        raise Interrupted(signal.Signals[execution.stopped_by])
    newly = sorted(set(execution.quarantined) - already)
    if newly:
        ctx.write(
            "quarantine", devices=newly, reason="worker could not be reset in a Resource child"
        )
    return 0 if execution.ok else 1


def _child_env(ctx: RunContext) -> dict[str, str]:
    return {
        "SIMPLER_RUN_ID": ctx.run_id,
        "SIMPLER_PHASE": "resource",
        "SIMPLER_ATTEMPT": "1",
        "SIMPLER_REPORT": str(ctx.report),
        "SIMPLER_PLATFORM": ctx.platform,
    }


def _job(ctx: RunContext, test: ResourceTest) -> Job:
    argv = (
        sys.executable,
        "-m",
        "pytest",
        test.nodeid,
        "--simpler-phase",
        "resource",
        "--platform",
        ctx.platform,
        "--device",
        "{devices}",
        "--report",
        str(ctx.report),
        "-p",
        "no:xdist",
        *without_selection(ctx.pytest_args),
    )
    return Job(test.nodeid, test.devices, argv, test.est_s, test.timeout_s, nodeid=test.nodeid)


def _finished(ctx: RunContext, result: JobResult) -> None:
    ctx.write(
        "child",
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
    ctx.announce_child(result)
