"""``backfill`` (the default): wide jobs first, then EASY backfilling behind a reservation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from simpler.scheduler.policies.base import (
    Estimate,
    PickState,
    Placement,
    Policy,
    start_from_head,
    take,
)

if TYPE_CHECKING:
    from simpler.scheduler.jobs import Job

__all__ = ["PROMOTION_MARGIN", "BackfillPolicy"]

# A job jumps the size order only when its turn there would, by the estimates, end it
# more than this fraction past the lower bound. A tighter margin promotes jobs whose
# estimate is merely wrong by the usual x0.5-x2, and a promoted narrow job makes the
# wide ones wait on a reservation that the wrong estimate misplaces.
PROMOTION_MARGIN = 0.05


class BackfillPolicy(Policy):
    name = "backfill"

    def order(self, jobs: Sequence[Job], estimate: Estimate, pool_size: int | None) -> list[Job]:
        """The most devices first, and the longest estimate first within a device count
        (ties: label); a job whose turn would end past the lower bound by more than
        :data:`PROMOTION_MARGIN` (beyond the last job's unavoidable overhang) goes first,
        longest first. ``pool_size`` defaults to the widest job's device count. Why:
        docs/running.md, "How the Resource phase places its tests".
        """
        if not jobs:
            return []
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

    def pick(self, state: PickState) -> list[Placement]:
        """EASY backfilling: start from the head while jobs fit; a head that does not fit
        gets a reservation (the earliest time enough devices are free, by the running jobs'
        ``expected_end_s``), and a later job starts now only if it fits and either ends by
        the reservation or needs no more than the devices the head leaves spare then. A job
        past its estimate counts as ending now (docs/running.md, the same section).
        """
        waiting, now, estimate = state.waiting, state.now, state.estimate
        started, available = start_from_head(waiting, state.free)
        if len(started) == len(waiting):
            return started
        # Running jobs and the ones started in this call, as (expected end, devices held).
        releases = [(max(run.expected_end_s, now), len(run.devices)) for run in state.running]
        releases += [(now + estimate(job), job.devices) for job, _ in started]

        head = waiting[len(started)]
        reservation_s, spare = _reservation(head.devices, len(available), releases)
        for job in waiting[len(started) + 1 :]:
            if job.devices > len(available):
                continue
            ends_in_time = now + estimate(job) <= reservation_s
            if not ends_in_time:
                if job.devices > spare:
                    continue
                spare -= job.devices
            devices, available = take(available, job.devices)
            started.append((job, devices))
        return started


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
