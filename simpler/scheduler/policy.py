"""Placement policy: which waiting jobs start now, and on which devices.

A pure function of the waiting jobs, the free device ids, the running jobs and the time
it is given. No processes, no clock, no I/O: the executor calls it with real time, the
dry run with a virtual clock, and both get the same decisions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from simpler.scheduler.jobs import Job, Running

__all__ = [
    "POLICIES",
    "PROMOTION_MARGIN",
    "Estimate",
    "lower_bound",
    "order_jobs",
    "pick",
    "unfittable",
]

POLICIES = ("backfill", "fifo")

Estimate = Callable[["Job"], float]


# A job jumps the size order only when its turn there would, by the estimates, end it
# more than this fraction past the lower bound. A tighter margin promotes jobs whose
# estimate is merely wrong by the usual x0.5-x2, and a promoted narrow job makes the
# wide ones wait on a reservation that the wrong estimate misplaces.
PROMOTION_MARGIN = 0.05


def order_jobs(
    jobs: Sequence[Job], policy: str, estimate: Estimate, pool_size: int | None = None
) -> list[Job]:
    """The order in which ``policy`` considers ``jobs`` on a pool of ``pool_size`` devices.

    ``fifo`` keeps the given order.

    ``backfill`` puts the most devices first, and the longest estimate first within a
    device count (ties: label). Wide jobs then run while nothing narrow is left to
    fragment the pool: with 1/2/4/8-device jobs on 8 devices, the free devices are
    always a multiple of the head's count, so the pool stays full until the narrow
    jobs at the end, and only their order (longest first) rests on the estimates.

    A job whose turn in that order would end past the lower bound (by more than
    :data:`PROMOTION_MARGIN`, beyond the overhang of whichever job runs last) goes
    first instead, longest first: a long narrow job must start early or it alone sets
    the makespan. Its turn is estimated as if the jobs before it were spread over the
    whole pool. ``pool_size`` defaults to the widest job's device count.
    """
    _check_policy(policy)
    if policy == "fifo" or not jobs:
        return list(jobs)
    pool = pool_size or max(job.devices for job in jobs)
    seconds = {id(job): estimate(job) for job in jobs}
    area = {id(job): job.devices * seconds[id(job)] for job in jobs}
    bound = max(sum(area.values()) / pool, max(seconds.values()))
    by_size = sorted(jobs, key=lambda job: (-job.devices, -seconds[id(job)], job.label))
    promoted: list[Job] = []
    while by_size:
        # Whatever goes last ends past the bound by about this much, in any order:
        # moving a job ahead is worth it only when it would overhang by more.
        last = by_size[-1]
        unavoidable = seconds[id(last)] * (1 - last.devices / pool)
        limit = bound * (1 + PROMOTION_MARGIN) + unavoidable
        ahead = sum(area[id(job)] for job in promoted)
        late = []
        for job in by_size:
            if ahead / pool + seconds[id(job)] > limit:
                late.append(job)
            ahead += area[id(job)]
        if not late:
            break
        # Promoting moves the others later: look again until nobody is late.
        promoted += late
        by_size = [job for job in by_size if all(job is not other for other in late)]
    promoted.sort(key=lambda job: (-seconds[id(job)], -job.devices, job.label))
    return promoted + by_size


def pick(
    policy: str,
    waiting: Sequence[Job],
    free: Sequence[int],
    running: Sequence[Running],
    now: float,
    estimate: Estimate,
) -> list[tuple[Job, tuple[int, ...]]]:
    """The waiting jobs that start at ``now``, each with its device ids (lowest free first).

    ``waiting`` is in :func:`order_jobs` order; its first job is the head.

    ``fifo`` is strict head-of-line: start jobs from the head while they fit and stop at
    the first that does not, so no job ever starts before one that precedes it.

    ``backfill`` is EASY backfilling. Jobs start from the head while they fit. When the
    head does not fit, it gets a reservation: the earliest time at which enough devices
    are free for it, counting the devices that running jobs release at their
    ``expected_end_s``. A later job then starts now only if it fits now and either

    - ends (``now`` + its estimate) no later than the reservation, or
    - needs no more devices than the head leaves spare at the reservation (those spare
      devices are then used up for the jobs after it).

    Either way the head still has its devices at the reservation, so a backfilled job
    never delays it: while estimates hold, the reservation only moves earlier (a job
    finishing early) and a large job is never starved by a stream of small ones. A job
    running past its estimate counts as ending now, so it delays the head only as much as
    it actually overruns.
    """
    _check_policy(policy)
    available = sorted(free)
    started: list[tuple[Job, tuple[int, ...]]] = []
    # Running jobs and the ones started in this call, as (expected end, devices held).
    releases = [(max(run.expected_end_s, now), len(run.devices)) for run in running]

    index = 0
    while index < len(waiting) and waiting[index].devices <= len(available):
        job = waiting[index]
        devices, available = _take(available, job.devices)
        started.append((job, devices))
        releases.append((now + estimate(job), job.devices))
        index += 1
    if policy == "fifo" or index == len(waiting):
        return started

    head = waiting[index]
    reservation_s, spare = _reservation(head.devices, len(available), releases)
    for job in waiting[index + 1 :]:
        if job.devices > len(available):
            continue
        ends_in_time = now + estimate(job) <= reservation_s
        if not ends_in_time:
            if job.devices > spare:
                continue
            spare -= job.devices
        devices, available = _take(available, job.devices)
        started.append((job, devices))
    return started


def unfittable(jobs: Sequence[Job], pool_size: int) -> list[Job]:
    """The jobs that need more devices than the pool has: they could never start."""
    return [job for job in jobs if job.devices > pool_size]


def lower_bound(jobs: Sequence[Job], pool_size: int, estimate: Estimate) -> float:
    """No schedule is shorter: max(total device-seconds / pool size, the longest job)."""
    if not jobs:
        return 0.0
    if pool_size < 1:
        raise ValueError(f"the pool has {pool_size} devices: it needs at least one")
    device_seconds = sum(job.devices * estimate(job) for job in jobs)
    return max(device_seconds / pool_size, max(estimate(job) for job in jobs))


def _reservation(
    needed: int, free_now: int, releases: Sequence[tuple[float, int]]
) -> tuple[float, int]:
    """The earliest time ``needed`` devices are free, and how many more are free then."""
    free_then = free_now
    pending = sorted(releases)
    position = 0
    while position < len(pending):
        end_s = pending[position][0]
        # Every device released at the same instant is free at the reservation.
        while position < len(pending) and pending[position][0] == end_s:
            free_then += pending[position][1]
            position += 1
        if free_then >= needed:
            return end_s, free_then - needed
    # The head can never fit (callers refuse such jobs up front): rather than idle the
    # pool behind it, let every later job that fits start.
    return float("inf"), 0


def _take(available: list[int], count: int) -> tuple[tuple[int, ...], list[int]]:
    return tuple(available[:count]), available[count:]


def _check_policy(policy: str) -> None:
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}: choose one of {', '.join(POLICIES)}")
