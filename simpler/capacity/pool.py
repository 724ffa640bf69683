"""What a pool of N devices buys: the per-commit registrations through the scheduler's dry run."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from simpler.capacity.model import Registration
from simpler.capacity.sizing import device_count
from simpler.scheduler.jobs import Job

if TYPE_CHECKING:
    from simpler.scheduler.simulate import Schedule

__all__ = [
    "PoolResult",
    "PoolUnavailable",
    "load_dry_run",
    "pool_jobs",
    "simulate_pool",
]

_SIMULATE = "simpler.scheduler.simulate"

DryRun = Callable[[Sequence[Job], Sequence[int]], "Schedule"]


class PoolUnavailable(Exception):
    """The scheduler's dry run cannot be used; the message is one line for the user."""


@dataclass(frozen=True, slots=True)
class PoolResult:
    pool_size: int
    jobs: int
    makespan_s: float
    lower_bound_s: float
    utilization: float  # 0..1
    unsized: int  # registrations left out: nobody knows how many devices they need
    too_big: int  # registrations left out: they need more devices than the pool has


def load_dry_run() -> DryRun:
    """The scheduler's dry-run function; PoolUnavailable when it cannot be imported."""
    try:
        simulate = importlib.import_module(_SIMULATE)
    except ImportError as exc:  # a broken install: say so in one line, not a traceback
        raise PoolUnavailable(f"--pool: {_SIMULATE} cannot be imported: {exc}") from None
    return cast(DryRun, simulate.dry_run)


def pool_jobs(registrations: Iterable[Registration], pool_size: int) -> tuple[list[Job], int, int]:
    """The scheduler's job list for a pool, and how many were left out as unsized or too big."""
    jobs: list[Job] = []
    unsized = too_big = 0
    for index, registration in enumerate(registrations):
        if not (registration.enabled and registration.per_commit):
            continue
        devices = device_count(registration.suite)
        if devices is None:
            unsized += 1
        elif devices > pool_size:
            too_big += 1
        else:
            # A dry run never runs argv.
            label = f"{registration.backend}/{registration.suite}/{registration.filename}#{index}"
            jobs.append(Job(label, devices, argv=(), est_s=float(registration.est_time)))
    return jobs, unsized, too_big


def simulate_pool(
    registrations: Iterable[Registration], pool_size: int, dry_run: DryRun
) -> PoolResult:
    jobs, unsized, too_big = pool_jobs(registrations, pool_size)
    schedule = dry_run(jobs, list(range(pool_size)))
    return PoolResult(
        pool_size=pool_size,
        jobs=len(jobs),
        makespan_s=schedule.makespan_s,
        lower_bound_s=schedule.lower_bound_s,
        utilization=schedule.utilization,
        unsized=unsized,
        too_big=too_big,
    )
