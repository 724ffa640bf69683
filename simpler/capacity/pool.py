"""What a pool of N devices buys: the per-commit registrations through the scheduler's dry run.

The dry run belongs to ``simpler.scheduler`` (its own issue). Until that module exists,
``load_dry_run`` raises PoolUnavailable with a clear message; once it does, the only
wiring is the one call in ``simulate_pool``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from simpler.capacity.model import Registration
from simpler.capacity.sizing import device_count

__all__ = [
    "NOT_BUILT",
    "PoolResult",
    "PoolUnavailable",
    "load_dry_run",
    "pool_jobs",
    "simulate_pool",
]

NOT_BUILT = "--pool is not available yet: the scheduler's dry run (simpler.scheduler) is not built"
_SCHEDULER = "simpler.scheduler"

DryRun = Callable[..., Mapping[str, Any]]


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
    """The scheduler's dry-run function; PoolUnavailable while it is not built."""
    try:
        scheduler = importlib.import_module(_SCHEDULER)
    except ModuleNotFoundError as exc:
        if exc.name != _SCHEDULER:  # the scheduler exists but one of its imports is missing
            raise PoolUnavailable(f"--pool: {_SCHEDULER} cannot be imported: {exc}") from None
        raise PoolUnavailable(NOT_BUILT) from None
    dry_run = getattr(scheduler, "dry_run", None)
    if not callable(dry_run):
        raise PoolUnavailable(f"{NOT_BUILT} ({_SCHEDULER} has no dry_run())")
    return cast(DryRun, dry_run)


def pool_jobs(
    registrations: Iterable[Registration], pool_size: int
) -> tuple[list[dict[str, Any]], int, int]:
    """The scheduler's job list for a pool, and how many were left out as unsized or too big."""
    jobs: list[dict[str, Any]] = []
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
            # The job format of `simpler schedule`; a dry run never runs `cmd`.
            label = f"{registration.backend}/{registration.suite}/{registration.filename}#{index}"
            jobs.append(
                {"label": label, "devices": devices, "cmd": [], "est_s": registration.est_time}
            )
    return jobs, unsized, too_big


def simulate_pool(
    registrations: Iterable[Registration], pool_size: int, dry_run: DryRun
) -> PoolResult:
    jobs, unsized, too_big = pool_jobs(registrations, pool_size)
    outcome = dry_run(jobs, devices=pool_size)  # shaped like `simpler schedule --dry-run --json`
    return PoolResult(
        pool_size=pool_size,
        jobs=len(jobs),
        makespan_s=float(outcome["makespan_s"]),
        lower_bound_s=float(outcome["lower_bound_s"]),
        utilization=float(outcome["utilization"]),
        unsized=unsized,
        too_big=too_big,
    )
