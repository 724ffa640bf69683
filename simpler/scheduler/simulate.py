"""The dry run: play a policy over a list of jobs on a virtual clock.

Each job takes exactly its estimate. Placement decisions come from the same
:func:`simpler.scheduler.policies.pick` the executor calls, so a dry run shows what a real
run would do if every estimate were right.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from simpler.scheduler.durations import estimator
from simpler.scheduler.jobs import Running
from simpler.scheduler.policies import lower_bound, order_jobs, pick, unfittable

if TYPE_CHECKING:
    from simpler.scheduler.jobs import Job

__all__ = ["Placement", "Schedule", "dry_run"]


@dataclass
class Placement:
    """Where and when one job ran in the dry run."""

    label: str
    devices: list[int]
    start_s: float
    end_s: float


@dataclass
class Schedule:
    """A whole dry run, shaped like ``simpler schedule --dry-run --json``."""

    makespan_s: float
    lower_bound_s: float
    utilization: float  # device-seconds busy / (pool size * makespan), 0..1
    placements: list[Placement] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "makespan_s": self.makespan_s,
            "lower_bound_s": self.lower_bound_s,
            "utilization": self.utilization,
            "jobs": [asdict(placement) for placement in self.placements],
        }


def dry_run(
    jobs: Sequence[Job],
    devices: Sequence[int],
    policy: str = "backfill",
    estimate: Callable[[Job], float] | None = None,
) -> Schedule:
    """Simulate ``jobs`` on the device ids ``devices``; placements in order of start.

    ``estimate`` defaults to each job's ``est_s``, else the default estimate (a dry run
    reads no durations file; pass an :func:`~simpler.scheduler.durations.estimator`).
    ValueError, naming the job, for a job that could never run on this pool.
    """
    estimate = estimate or estimator({})
    pool = sorted(devices)
    if len(set(pool)) != len(pool):
        raise ValueError(f"device ids {list(devices)} name a device more than once")
    _check_jobs(jobs, len(pool), estimate)

    waiting = order_jobs(jobs, policy, estimate, len(pool))
    free = list(pool)
    running: list[Running] = []
    placements: list[Placement] = []
    now = 0.0
    while waiting or running:
        for job, taken in pick(policy, waiting, free, running, now, estimate):
            _remove(waiting, job)
            free = [device for device in free if device not in taken]
            end_s = now + estimate(job)
            running.append(Running(job, taken, started_s=now, expected_end_s=end_s))
            placements.append(Placement(job.label, list(taken), now, end_s))
        if not running:
            break  # unreachable once _check_jobs passed: a lone job always fits an idle pool
        now = min(run.expected_end_s for run in running)
        finished = [run for run in running if run.expected_end_s <= now]
        running = [run for run in running if run.expected_end_s > now]
        free = sorted([*free, *(device for run in finished for device in run.devices)])

    makespan = max((placement.end_s for placement in placements), default=0.0)
    busy = sum(len(p.devices) * (p.end_s - p.start_s) for p in placements)
    return Schedule(
        makespan_s=makespan,
        lower_bound_s=lower_bound(jobs, len(pool), estimate),
        utilization=busy / (len(pool) * makespan) if makespan > 0 else 0.0,
        placements=placements,
    )


def _check_jobs(jobs: Sequence[Job], pool_size: int, estimate: Callable[[Job], float]) -> None:
    too_big = unfittable(jobs, pool_size)
    if too_big:
        job = too_big[0]
        raise ValueError(
            f"job {job.label!r} needs {job.devices} devices but the pool has {pool_size}:"
            " it can never start; give it fewer devices or the pool more"
        )
    for job in jobs:
        if job.devices < 1:
            raise ValueError(f"job {job.label!r} needs {job.devices} devices: at least 1")
        if not estimate(job) >= 0:  # also catches NaN
            raise ValueError(f"job {job.label!r} has estimate {estimate(job)}: at least 0 s")


def _remove(waiting: list[Job], job: Job) -> None:
    # By identity: two equal jobs are still two jobs to run.
    for index, candidate in enumerate(waiting):
        if candidate is job:
            del waiting[index]
            return
