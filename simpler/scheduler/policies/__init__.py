"""Placement policies: which waiting jobs start now, and on which devices.

One module per policy (``backfill.py``, ``fifo.py``; what they share in ``base.py``), and
here the registry from the name a user chooses (``--policy``) to the policy's class, with
the entry points the executor and the dry run call by that name. The bounds below hold
whatever the policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from simpler.scheduler.policies.backfill import PROMOTION_MARGIN, BackfillPolicy
from simpler.scheduler.policies.base import Estimate, PickState, Placement, Policy
from simpler.scheduler.policies.fifo import FifoPolicy

if TYPE_CHECKING:
    from simpler.scheduler.jobs import Job, Running

__all__ = [
    "POLICIES",
    "POLICY_CLASSES",
    "PROMOTION_MARGIN",
    "Estimate",
    "PickState",
    "Policy",
    "lower_bound",
    "order_jobs",
    "pick",
    "policy_named",
    "unfittable",
]

# The user-visible name of each policy, the default first.
POLICY_CLASSES: dict[str, type[Policy]] = {
    policy.name: policy for policy in (BackfillPolicy, FifoPolicy)
}
POLICIES = tuple(POLICY_CLASSES)


def policy_named(name: str) -> Policy:
    try:
        return POLICY_CLASSES[name]()
    except KeyError:
        raise ValueError(f"unknown policy {name!r}: choose one of {', '.join(POLICIES)}") from None


def order_jobs(
    jobs: Sequence[Job], policy: str, estimate: Estimate, pool_size: int | None = None
) -> list[Job]:
    """The order in which ``policy`` considers ``jobs`` on a pool of ``pool_size`` devices."""
    return policy_named(policy).order(jobs, estimate, pool_size)


def pick(
    policy: str,
    waiting: Sequence[Job],
    free: Sequence[int],
    running: Sequence[Running],
    now: float,
    estimate: Estimate,
) -> list[Placement]:
    """The waiting jobs that start at ``now``, each with its device ids (lowest free first).

    ``waiting`` is in :func:`order_jobs` order; its first job is the head.
    """
    return policy_named(policy).pick(PickState(waiting, free, running, now, estimate))


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
