"""The Resource phase: one child pytest per ``device_count`` test, placed by the scheduler.

Each child is told its devices as the scheduler places it (``4,5``: ``RunSetup.child``); its
output streams to ``<report dir>/logs/<label>.log``; its end becomes a ``child``
record the moment it is known, so a killed orchestrator loses no finished child.
"""

from __future__ import annotations

from simpler.ci.child_output import announce
from simpler.contract import EXIT_FAILED, EXIT_OK
from simpler.orchestrator.collection import ListingError, collect_suite
from simpler.orchestrator.context import RunContext
from simpler.orchestrator.phase_jobs import child_record, execute_for_phase, executor_options
from simpler.orchestrator.pytest_args import resource_child_argv
from simpler.orchestrator.run_coverage import result_ended
from simpler.reporting.records import DeviceRetiredRecord
from simpler.reporting.recovery_queries import retired_devices
from simpler.scheduler.durations import estimator, load_measurements, record_results
from simpler.scheduler.jobs import Job, JobResult
from simpler.split.listing import ResourceTest

__all__ = ["resource_phase"]


def resource_phase(ctx: RunContext) -> int:
    setup = ctx.setup
    tests = setup.resource_tests
    if tests is None:
        try:
            tests = collect_suite(setup.platform, setup.devices, setup.pytest_args.given).resource
        except (ListingError, ValueError) as error:
            print(f"simpler: {error}", flush=True)
            return EXIT_FAILED
    if not tests:
        return EXIT_OK
    already = retired_devices(ctx.records())
    jobs = [_job(ctx, t) for t in tests]
    options = executor_options(
        ctx,
        estimate=estimator(load_measurements(setup.durations_file)),
        on_finish=lambda result: _finished(ctx, result),
        policy=setup.options.policy,
        job_timeout_s=setup.options.job_timeout,
        session_timeout_s=setup.options.session_timeout,
        exit_first=setup.options.exitfirst,
        retire=lambda result: sorted(retired_devices(ctx.records()) & set(result.devices)),
        retired_at_start=sorted(already),
        deadline_estimate=estimator(load_measurements(setup.durations_file), default=0.0),
    )
    if already:
        reason = "worker could not be reset in L2"
        ctx.write(ctx.record(DeviceRetiredRecord, devices=sorted(already), reason=reason))
    execution = execute_for_phase(
        ctx, "resource", jobs, setup.devices, options,
        coverage_label=lambda result: _coverage_label(result.nodeid or result.label),
        recorded=lambda done: record_results(setup.durations_file, done.results),
    )  # fmt: skip
    newly = sorted(set(execution.retired) - already)
    if newly:
        reason = "worker could not be reset in a Resource child"
        ctx.write(ctx.record(DeviceRetiredRecord, devices=newly, reason=reason))
    # A job the deadline stopped or kept from starting is no failure: its test is not run.
    failed = [r for r in execution.results if not r.ok and not r.extra.get("deadline")]
    return EXIT_FAILED if failed or (execution.stopped_by not in (None, "deadline")) else EXIT_OK


def _job(ctx: RunContext, test: ResourceTest) -> Job:
    argv = resource_child_argv(test.nodeid, ctx.setup.pytest_args)
    env = tuple(ctx.setup.child("resource", label=_coverage_label(test.nodeid)).to_env().items())
    return Job(
        test.nodeid, test.devices, argv, test.est_s, test.timeout_s, env=env, nodeid=test.nodeid
    )


def _coverage_label(nodeid: str) -> str:
    return f"Resource child {nodeid}"


def _finished(ctx: RunContext, result: JobResult) -> None:
    result_ended(ctx, result, _coverage_label(result.nodeid or result.label))
    if result.extra.get("deadline") or result.extra.get("interrupted"):
        # Stopped (or never started) for the deadline or a signal: its test, unless it
        # reported already, is counted as not run from the phase's planned tests; its child
        # is no failure.
        stopped = (
            "at the deadline"
            if result.extra.get("deadline")
            else "by " + str(result.extra["interrupted"])
        )
        why = result.extra.get("not_run") or f"stopped {stopped}"
        print(f"simpler: {result.nodeid or result.label}: {why}", flush=True)
        return
    record = child_record(ctx, result).replace(not_run=result.extra.get("not_run"))
    quarantine = ctx.setup.test_quarantine
    # A child that dies before its test's record still belongs to a quarantined test.
    ctx.write(
        quarantine.mark(record, ctx.setup.platform) if quarantine and result.nodeid else record
    )
    announce(result)
