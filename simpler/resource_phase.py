"""The Resource phase: one child pytest per ``device_count`` test, placed by the scheduler.

Each child gets its devices as ``--device 4-5`` and ``SIMPLER_DEVICES=4,5``; its
output streams to ``<report dir>/logs/<label>.log``; its end becomes a ``child``
record the moment it is known, so a killed orchestrator loses no finished child.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simpler.devices import format_devices
from simpler.pytest_command import PYTEST_NO_TESTS, without_selection
from simpler.scheduler.jobs import Job, JobResult

if TYPE_CHECKING:
    from simpler.phases import RunContext

__all__ = ["ResourceTest", "list_resource_tests", "quarantined_devices", "run_resource_phase"]


class ResourceListingError(RuntimeError):
    """The suite could not be collected to find its Resource tests."""


@dataclass(frozen=True)
class ResourceTest:
    nodeid: str
    devices: int
    est_s: float | None
    timeout_s: float | None


def list_resource_tests(
    platform: str, devices: list[int], pytest_args: list[str]
) -> list[ResourceTest]:
    """Collect (without running) the tests marked ``device_count``."""
    with tempfile.TemporaryDirectory(prefix="simpler-collect-") as folder:
        listing = Path(folder) / "resource.json"
        argv = [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "--simpler-phase",
            "resource",
            "--platform",
            platform,
            "--device",
            format_devices(devices),
            "--simpler-list-resource",
            str(listing),
            "-p",
            "no:xdist",
            *pytest_args,
        ]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode not in (0, PYTEST_NO_TESTS) or not listing.exists():
            last = (done.stdout + done.stderr).strip().splitlines()[-1:] or ["no output"]
            raise ResourceListingError(f"collecting the Resource tests failed: {last[0]}")
        entries = json.loads(listing.read_text())
    return [_resource_test(e) for e in entries]


def _resource_test(entry: dict[str, Any]) -> ResourceTest:
    count = entry["devices"]
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(
            f"{entry['nodeid']}: device_count must be a positive integer, got {count!r}"
        )
    return ResourceTest(
        entry["nodeid"], count, _seconds(entry, "est_s"), _seconds(entry, "timeout_s")
    )


def _seconds(entry: dict[str, Any], key: str) -> float | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"{entry['nodeid']}: device_count {key[:-2]}= must be positive seconds")
    return float(value)


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
            tests = list_resource_tests(ctx.platform, ctx.devices, ctx.pytest_args)
        except (ResourceListingError, ValueError) as error:
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
