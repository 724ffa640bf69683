"""Synthetic mixed workloads for the scheduler benchmark, and the makespan ratios on them.

``python scripts/bench_workloads.py`` prints the figures that ``nox -s bench``
checks: the default policy's makespan against the lower bound and against FIFO.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterable, Sequence
from statistics import fmean
from typing import Any

from simpler.scheduler.durations import estimator
from simpler.scheduler.jobs import Job
from simpler.scheduler.simulate import dry_run

__all__ = ["DEVICE_COUNTS", "makespan_figures", "mixed_workload"]

DEVICE_COUNTS = (1, 2, 4, 8, 16)
# Lognormal run times: most jobs take tens of seconds, a few take many minutes, the
# usual shape of test-suite durations.
MEDIAN_S = 30.0
SIGMA = 1.0


def mixed_workload(seed: int, n_jobs: int, pool: int) -> list[Job]:
    """``n_jobs`` jobs in submission order: 1/2/4/8/16 devices (capped at ``pool``), in
    equal shares, with heavy-tailed lognormal estimates. The same seed gives the same jobs."""
    rng = random.Random(seed)
    jobs = []
    for index in range(n_jobs):
        devices = min(rng.choice(DEVICE_COUNTS), pool)
        est_s = round(rng.lognormvariate(math.log(MEDIAN_S), SIGMA), 3)
        jobs.append(
            Job(
                label=f"job{index:03d}-{devices}dev",
                devices=devices,
                argv=("sleep", f"{est_s}"),
                est_s=est_s,
            )
        )
    return jobs


def makespan_figures(
    seeds: Iterable[int] = range(20), pools: Sequence[int] = (4, 8, 16), n_jobs: int = 60
) -> dict[str, Any]:
    """Makespan ratios of the default policy (backfill) over ``pools`` x ``seeds``.

    ``backfill_over_lower_bound`` and ``backfill_over_fifo`` are means over every
    (pool, seed); ``per_pool`` has the same means for each pool size. FIFO runs the jobs
    in their submission order; backfill orders them itself.
    """
    seeds = list(seeds)
    estimate = estimator({})
    per_pool: dict[str, dict[str, float]] = {}
    over_bound_all: list[float] = []
    over_fifo_all: list[float] = []
    for pool in pools:
        over_bound: list[float] = []
        over_fifo: list[float] = []
        for seed in seeds:
            jobs = mixed_workload(seed, n_jobs, pool)
            devices = list(range(pool))
            backfill = dry_run(jobs, devices, "backfill", estimate)
            fifo = dry_run(jobs, devices, "fifo", estimate)
            over_bound.append(backfill.makespan_s / backfill.lower_bound_s)
            over_fifo.append(backfill.makespan_s / fifo.makespan_s)
        per_pool[str(pool)] = {
            "backfill_over_lower_bound": fmean(over_bound),
            "backfill_over_fifo": fmean(over_fifo),
            "worst_backfill_over_lower_bound": max(over_bound),
        }
        over_bound_all += over_bound
        over_fifo_all += over_fifo
    return {
        "backfill_over_lower_bound": fmean(over_bound_all),
        "backfill_over_fifo": fmean(over_fifo_all),
        "runs": len(over_bound_all),
        "n_jobs": n_jobs,
        "per_pool": per_pool,
    }


if __name__ == "__main__":
    print(json.dumps(makespan_figures(), indent=2))
