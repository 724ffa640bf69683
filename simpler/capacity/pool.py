"""What a pool of N devices buys: the registrations of one schedule through the scheduler's dry run.

One pool for every backend (``--pool N``), or one per backend (``--pool cuda=8,amd=8``), each
fed the enabled registrations that run per commit, or with ``--nightly`` those of the night.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from simpler.capacity.aggregate import backend_slot
from simpler.capacity.model import Registration
from simpler.capacity.pool_spec import PoolSpec
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
    "simulate_pools",
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
    backend: str | None = None  # the backend this pool serves; None: every backend
    nightly: bool = False  # the night's registrations rather than the per-commit ones

    @property
    def schedule(self) -> str:
        return "nightly" if self.nightly else "per-commit"


def load_dry_run() -> DryRun:
    """The scheduler's dry-run function; PoolUnavailable when it cannot be imported."""
    try:
        simulate = importlib.import_module(_SIMULATE)
    except ImportError as exc:  # a broken install: say so in one line, not a traceback
        raise PoolUnavailable(f"--pool: {_SIMULATE} cannot be imported: {exc}") from None
    return cast(DryRun, simulate.dry_run)


def pool_jobs(
    registrations: Iterable[Registration], pool_size: int, *, nightly: bool = False
) -> tuple[list[Job], int, int]:
    """The scheduler's job list for a pool, and how many were left out as unsized or too big."""
    jobs: list[Job] = []
    unsized = too_big = 0
    for index, registration in enumerate(registrations):
        # per_commit == nightly: the registration belongs to the other schedule.
        if not registration.enabled or registration.per_commit == nightly:
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
    registrations: Iterable[Registration],
    pool_size: int,
    dry_run: DryRun,
    *,
    nightly: bool = False,
    backend: str | None = None,
) -> PoolResult:
    jobs, unsized, too_big = pool_jobs(registrations, pool_size, nightly=nightly)
    schedule = dry_run(jobs, list(range(pool_size)))
    return PoolResult(
        pool_size=pool_size,
        jobs=len(jobs),
        makespan_s=schedule.makespan_s,
        lower_bound_s=schedule.lower_bound_s,
        utilization=schedule.utilization,
        unsized=unsized,
        too_big=too_big,
        backend=backend,
        nightly=nightly,
    )


def simulate_pools(
    registrations: Sequence[Registration], spec: PoolSpec, dry_run: DryRun, *, nightly: bool
) -> list[PoolResult]:
    """One result for ``--pool N``; one per named backend, on its own pool, otherwise."""
    if spec.size is not None:
        return [simulate_pool(registrations, spec.size, dry_run, nightly=nightly)]
    results = []
    for backend, size in spec.per_backend:
        slot = backend_slot(backend)
        mine = [r for r in registrations if backend_slot(r.backend) == slot]
        results.append(simulate_pool(mine, size, dry_run, nightly=nightly, backend=backend))
    return results
