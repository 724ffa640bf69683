"""The retry phase: fresh processes for the poison-skipped tests and each test that poisoned,
placed by the scheduler over every healthy device of the run.

In rounds: each poisoned worker's victims together in a process, each trigger one attempt a
round, the victims behind a second fault in the next round (docs/design.md, "Phases").
"""

from __future__ import annotations

from dataclasses import dataclass

from simpler.ci.child_output import announce
from simpler.contract import EXIT_FAILED, EXIT_OK
from simpler.orchestrator.context import RunContext
from simpler.orchestrator.phase_jobs import execute_for_phase, executor_options
from simpler.orchestrator.pytest_args import pytest_argv, undistributed_options
from simpler.orchestrator.pytest_run import phase_exit
from simpler.orchestrator.run_coverage import result_ended
from simpler.reporting.recovery_queries import (
    poison_skipped,
    poison_skipped_by_worker,
    poison_triggers,
    retired_devices,
)
from simpler.scheduler.jobs import Job, JobResult

__all__ = ["RETRY_ATTEMPTS", "VICTIM_PROCESSES", "retry_phase"]

RETRY_ATTEMPTS = (2, 3)  # the triggering test's extra attempts, each on a clean card
VICTIM_ATTEMPT = 2  # a victim's first real run is its second attempt
VICTIM_PROCESSES = 4  # fresh processes a worker's victims may take, each after another fault


@dataclass
class _Victims:
    """The tests one poisoned worker skipped that still wait for a verdict."""

    label: str
    pending: list[str]


@dataclass
class _Trigger:
    nodeid: str
    attempt_index: int = 0  # into RETRY_ATTEMPTS

    @property
    def attempt(self) -> int:
        return RETRY_ATTEMPTS[self.attempt_index]


def retry_phase(ctx: RunContext) -> int:
    records = ctx.records()
    groups = poison_skipped_by_worker(records).items()
    victims = [
        _Victims(_victims_label(i, worker), ids) for i, (worker, ids) in enumerate(groups, 1)
    ]
    triggers = [_Trigger(nodeid) for nodeid in poison_triggers(records)]
    if not victims and not triggers:
        return EXIT_OK
    # A fresh process sees a clean card, but prefer the devices that were never retired.
    retired = retired_devices(records)
    healthy = [d for d in ctx.setup.devices if d not in retired] or ctx.setup.devices
    worst = EXIT_OK
    for round_number in range(1, VICTIM_PROCESSES + 1):
        if not victims and not triggers:
            break
        jobs = [_victims_job(ctx, g, _label(g.label, round_number)) for g in victims]
        jobs += [_trigger_job(ctx, t) for t in triggers]
        seen = len(records)
        results = {r.label: r for r in _execute(ctx, jobs, healthy)}
        records = ctx.records()
        queued_again = poison_skipped(records[seen:])
        for group in victims:
            worst = max(worst, _exit(results.get(_label(group.label, round_number))))
        victims = [g for g in victims if _still_waiting(g, queued_again)]
        failed = [t for t in triggers if _exit(results.get(_trigger_label(t))) != EXIT_OK]
        if any(t.attempt_index + 1 == len(RETRY_ATTEMPTS) for t in failed):
            worst = EXIT_FAILED  # the last attempt failed too: a real failure
        triggers = [t for t in failed if t.attempt_index + 1 < len(RETRY_ATTEMPTS)]
        for trigger in triggers:
            trigger.attempt_index += 1
    return worst


def _label(base: str, round_number: int) -> str:
    # Each round's process has a log of its own.
    return base if round_number == 1 else f"{base} round {round_number}"


def _still_waiting(group: _Victims, queued_again: list[str]) -> bool:
    """Another round for the victims registered again behind a second fault, while their
    process made progress (one that ran none of them would run none again) and the bound holds."""
    again = [n for n in queued_again if n in group.pending]
    if not again or len(again) == len(group.pending):
        return False
    group.pending = again
    return True


def _execute(ctx: RunContext, jobs: list[Job], devices: list[int]) -> list[JobResult]:
    options = executor_options(
        ctx,
        estimate=lambda job: job.est_s or 1.0,  # tests to run: the longest queue starts first
        on_finish=lambda result: _finished(ctx, result),
    )  # none retired inside the phase: each process starts on a card made clean for it
    return execute_for_phase(ctx, "retry", jobs, devices, options).results


def _finished(ctx: RunContext, result: JobResult) -> None:
    result_ended(ctx, result, result.label)
    announce(result)


def _victims_job(ctx: RunContext, group: _Victims, label: str) -> Job:
    extra = ["--simpler-retry-role", "victim", *group.pending]
    return _job(ctx, label, VICTIM_ATTEMPT, extra, float(len(group.pending)))


def _trigger_job(ctx: RunContext, trigger: _Trigger) -> Job:
    extra = ["--simpler-retry-role", "trigger", trigger.nodeid]
    return _job(ctx, _trigger_label(trigger), trigger.attempt, extra, 1.0)


def _job(ctx: RunContext, label: str, attempt: int, extra: list[str], est_s: float) -> Job:
    """A retry process: ``label`` names it in the logs and the run's coverage."""
    argv = pytest_argv(*extra, *undistributed_options(ctx.setup.pytest_args))
    told = ctx.setup.child("retry", label=label, attempt=attempt)
    return Job(label, 1, tuple(argv), est_s, env=tuple(told.to_env().items()))


def _victims_label(index: int, worker: str) -> str:
    return f"retry-victims-{index}" + (f" ({worker})" if worker else "")


def _trigger_label(trigger: _Trigger) -> str:
    return f"retry {trigger.nodeid} #{trigger.attempt}"


def _exit(result: JobResult | None) -> int:
    """A retry process's end as a phase exit: no tests selected is no failure; a process
    that died or never ran is one."""
    if result is None or result.returncode is None or result.timed_out:
        return EXIT_FAILED
    return phase_exit(result.returncode)
