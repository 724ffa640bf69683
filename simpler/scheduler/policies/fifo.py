"""``fifo``: the given order, strictly head of the line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from simpler.scheduler.policies.base import Estimate, PickState, Placement, Policy, start_from_head

if TYPE_CHECKING:
    from simpler.scheduler.jobs import Job

__all__ = ["FifoPolicy"]


class FifoPolicy(Policy):
    """Keeps the given order, and starts jobs from the head while they fit, stopping at the
    first that does not: no job ever starts before one that precedes it."""

    name = "fifo"

    def order(self, jobs: Sequence[Job], estimate: Estimate, pool_size: int | None) -> list[Job]:
        return list(jobs)

    def pick(self, state: PickState) -> list[Placement]:
        started, _ = start_from_head(state.waiting, state.free)
        return started
