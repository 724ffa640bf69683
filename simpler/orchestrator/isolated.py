"""``--isolate file|test``: the L2 tests as CI proper runs them, each file (or test) in a
process of its own, so that no test sees what another left in its process.

A device unit takes a device from the scheduler, the others any of the ``-j`` slots, longest
first; one report and summary, and a crash ends one unit's process, never the run
(docs/isolation.md, "What runs where", "What a crash or a hang costs").
"""

from __future__ import annotations

from dataclasses import dataclass

from simpler.base.nodeids import file_of
from simpler.ci.child_output import announce
from simpler.contract import EXIT_FAILED, EXIT_OK
from simpler.orchestrator.context import RunContext
from simpler.orchestrator.phase_jobs import child_record, execute_for_phase, executor_options
from simpler.orchestrator.pytest_args import pytest_argv, undistributed_options
from simpler.orchestrator.pytest_run import l2_plugin_flags, phase_exit
from simpler.orchestrator.run_coverage import result_ended
from simpler.scheduler.durations import load_durations
from simpler.scheduler.jobs import Job, JobResult

__all__ = ["ISOLATE_MODES", "isolated_l2_phase"]

ISOLATE_MODES = ("file", "test")


@dataclass(frozen=True)
class _Unit:
    name: str  # the file, or the test's node id
    tests: tuple[str, ...]
    needs_device: bool


def isolated_l2_phase(ctx: RunContext) -> int:
    """Every L2 unit in a process of its own; the phase's exit as the L2 pass's would be."""
    units = _units(ctx)
    if not units:
        return EXIT_OK
    learned = load_durations(ctx.setup.durations_file)
    results = _execute(ctx, [_job(ctx, unit, learned) for unit in units])
    failed = [r for r in results if not r.ok and not r.extra.get("deadline")]
    return max((phase_exit(r.returncode) if r.returncode is not None else EXIT_FAILED
                for r in failed), default=EXIT_OK)  # fmt: skip


def _units(ctx: RunContext) -> list[_Unit]:
    tests, plain = ctx.setup.l2_tests or [], ctx.setup.l2_plain
    if ctx.setup.isolate == "test":
        return [_Unit(n, (n,), n not in plain) for n in tests]
    files: dict[str, list[str]] = {}
    for nodeid in tests:
        files.setdefault(file_of(nodeid), []).append(nodeid)
    return [
        _Unit(path, tuple(ids), any(n not in plain for n in ids)) for path, ids in files.items()
    ]


def _job(ctx: RunContext, unit: _Unit, learned: dict[str, float]) -> Job:
    # A unit of no device is told it holds none ("none"): a test in it that asks for a device
    # after all fails saying so, never shares a card.
    options = undistributed_options(ctx.setup.pytest_args)
    argv = pytest_argv(*l2_plugin_flags(ctx), *options, *unit.tests)
    told = ctx.setup.child("l2", label=_coverage_label(unit.name), deadline=True)
    devices = 1 if unit.needs_device else 0
    estimate = _estimate(ctx, unit, learned)
    return Job(unit.name, devices, tuple(argv), estimate, env=tuple(told.to_env().items()))


def _estimate(ctx: RunContext, unit: _Unit, learned: dict[str, float]) -> float | None:
    """L2 durations are learned per file: a unit takes its tests' share of its file's."""
    path = file_of(unit.name)
    seconds = learned.get(f"file:{path}")
    if seconds is None:
        return None
    in_file = sum(1 for nodeid in ctx.setup.l2_tests or () if file_of(nodeid) == path)
    return seconds * len(unit.tests) / max(1, in_file)


def _execute(ctx: RunContext, jobs: list[Job]) -> list[JobResult]:
    setup = ctx.setup
    options = executor_options(
        ctx,
        # Longest first on what was learned; a unit never measured is judged by nothing
        # else, and the deadline does not keep it from starting.
        estimate=lambda job: job.est_s or 0.0,
        on_finish=lambda result: _finished(ctx, result),
        job_timeout_s=setup.options.job_timeout,
    )
    execution = execute_for_phase(
        ctx, "l2", jobs, setup.devices, options,
        coverage_label=lambda result: _coverage_label(result.label),
    )  # fmt: skip
    return execution.results


def _coverage_label(unit: str) -> str:
    """A unit's process as the coverage names it: the same label for its env and its end."""
    return f"isolated {unit}"


def _finished(ctx: RunContext, result: JobResult) -> None:
    result_ended(ctx, result, _coverage_label(result.label))
    if result.extra.get("not_run"):  # the deadline or a signal kept it from starting
        print(f"simpler: {result.label}: {result.extra['not_run']}", flush=True)
        return
    stopped = result.extra.get("deadline") or result.extra.get("interrupted")
    if not result.ok and not stopped and _died(result):
        # Its tests' own records say what failed; a process that died says it here.
        ctx.write(child_record(ctx, result).replace(isolated=True))
    announce(result)


def _died(result: JobResult) -> bool:
    """The process ended without pytest's verdict: a signal, a timeout, or no summary line."""
    return result.signal is not None or result.timed_out or not result.reached_summary
