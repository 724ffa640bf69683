"""Learned durations, measured on real processes: short ``sleep`` jobs on 8 devices whose
hand estimates are off by x0.5 to x2.

``python scripts/bench_durations.py [REPEATS]`` prints the three figures that
``durations_figures`` hands to ``nox -s bench``:

- the first run (cold: only ``est_s``) against the lower bound on what the jobs took;
- the second run, on the durations the first one recorded, against its lower bound;
- the first run against FIFO in suite order (the original dispatcher: head-of-line
  blocking, no estimates), on the same jobs.

The lower bound of a run is max(device-seconds the jobs took / devices, longest job),
from that run's own measured durations, so process start-up and polling count against
simpler, not against the bound.
"""

from __future__ import annotations

import math
import os
import random
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bench import Figure

from simpler.processes.executor import ExecutorOptions, execute
from simpler.processes.locks import DeviceLocks
from simpler.scheduler.durations import estimator, load_measurements, record_results
from simpler.scheduler.jobs import Job, JobResult

__all__ = ["durations_figures", "sleep_suite"]

POOL = list(range(8))
# Most device tests need one card; the wide ones are fewer but hold most device-seconds.
SHARES = {1: 24, 2: 12, 4: 12, 8: 12}
# Lognormal run times, as test suites' durations are (most short, a few long: the shape
# bench_workloads uses too), clipped so that one measurement stays under ~20 s.
MEDIAN_S, SIGMA = 0.45, 0.8
SHORTEST_S, LONGEST_S = 0.1, 3.0
WORST_FACTOR = 2.0  # estimates are off by a factor between 1/2 and 2, log-uniform
MAX_ROUNDS = 3  # each round is three runs of ~15-19 s on 8 idle "devices"


def sleep_suite(seed: int) -> tuple[list[Job], dict[str, float]]:
    """The jobs in suite order (by node id, as pytest lists them) and what each sleeps.

    Each job's ``est_s`` is its sleep times a fixed random factor in x0.5-x2.
    """
    rng = random.Random(seed)
    jobs = []
    sleeps: dict[str, float] = {}
    sizes = [size for size, count in SHARES.items() for _ in range(count)]
    for index, devices in enumerate(sizes):
        seconds = round(
            min(LONGEST_S, max(SHORTEST_S, rng.lognormvariate(math.log(MEDIAN_S), SIGMA))), 2
        )
        factor = math.exp(rng.uniform(-math.log(WORST_FACTOR), math.log(WORST_FACTOR)))
        nodeid = f"tests/st/test_{rng.randrange(36**3):04x}.py::test_{index}_{devices}dev"
        jobs.append(Job(nodeid, devices, ("sleep", f"{seconds}"), round(seconds * factor, 3)))
        sleeps[nodeid] = seconds
    jobs.sort(key=lambda job: job.label)
    return jobs, sleeps


def durations_figures(repeats: int) -> list[Figure]:
    rounds = max(1, min(repeats, MAX_ROUNDS))
    first_s = second_s = fifo_s = first_bound_s = second_bound_s = 0.0
    per_seed = []
    for seed in range(rounds):
        first, second, fifo = _one_round(seed)
        first_s += _makespan(first)
        second_s += _makespan(second)
        fifo_s += _makespan(fifo)
        first_bound_s += _lower_bound(first)
        second_bound_s += _lower_bound(second)
        per_seed.append(f"{_makespan(first):.2f}/{_makespan(second):.2f}/{_makespan(fifo):.2f}s")
    jobs, _ = sleep_suite(0)
    detail = (
        f"{len(jobs)} sleep jobs, lognormal around {MEDIAN_S}s in {SHORTEST_S}-{LONGEST_S}s "
        f"(1/2/4/8 devices: "
        f"{'/'.join(str(n) for n in SHARES.values())}) on 8 devices, estimates off by "
        f"x0.5-x2; sums over {rounds} seeded suites; first/second/fifo per suite: "
        + ", ".join(per_seed)
    )
    return [
        Figure(
            "learned durations: first run (est_s only)",
            first_s / first_bound_s,
            "the lower bound on actual durations",
            f"{first_s:.2f}s vs {first_bound_s:.2f}s; {detail}",
            1.15,
        ),
        Figure(
            "learned durations: second run (measured)",
            second_s / second_bound_s,
            "the lower bound on actual durations",
            f"{second_s:.2f}s vs {second_bound_s:.2f}s",
            1.05,
        ),
        Figure(
            "learned durations: first run vs FIFO",
            first_s / fifo_s,
            "FIFO in suite order (head-of-line blocking)",
            f"{first_s:.2f}s vs {fifo_s:.2f}s",
            0.8,
        ),
    ]


def _one_round(seed: int) -> tuple[list[JobResult], list[JobResult], list[JobResult]]:
    jobs, _ = sleep_suite(seed)
    with tempfile.TemporaryDirectory(prefix="simpler-bench-durations-") as folder:
        durations = Path(folder) / "durations.json"
        first = _run(jobs, "backfill", durations, Path(folder))
        record_results(durations, first)
        second = _run(jobs, "backfill", durations, Path(folder))
        fifo = _run(jobs, "fifo", Path(folder) / "none.json", Path(folder))
    for results in (first, second, fifo):
        failed = [r.label for r in results if not r.ok]
        if failed:
            raise RuntimeError(f"sleep job(s) failed: {', '.join(failed)}")
    return first, second, fifo


def _run(jobs: Sequence[Job], policy: str, durations: Path, folder: Path) -> list[JobResult]:
    options = ExecutorOptions(
        estimate=estimator(load_measurements(durations)),
        policy=policy,
        log_dir=folder / "logs",
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        locks=DeviceLocks(folder / "locks"),  # private: never contend with a real run
    )
    return execute(jobs, POOL, options).results


def _makespan(results: Sequence[JobResult]) -> float:
    return max(r.end_s for r in results) - min(r.start_s for r in results)


def _lower_bound(results: Sequence[JobResult]) -> float:
    device_seconds = sum(len(r.devices) * r.duration_s for r in results)
    return max(device_seconds / len(POOL), max(r.duration_s for r in results))


if __name__ == "__main__":
    for figure in durations_figures(int(sys.argv[1]) if len(sys.argv) > 1 else 1):
        goal = f"<={figure.goal:g}x" if figure.goal is not None else "-"
        print(f"{figure.name:44} {figure.ratio:6.3f}x {goal:>7}  {figure.baseline}")
        print(f"{'':44} {figure.detail}")
