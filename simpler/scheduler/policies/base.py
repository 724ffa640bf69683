"""What a placement policy is, and the start from the head of the line every policy makes.

A policy is pure: the waiting jobs, the free device ids, the running jobs and the time it
is given decide. No processes, no clock, no I/O: the executor calls it with real time, the
dry run with a virtual clock, and both get the same decisions.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from simpler.scheduler.jobs import Job, Running

__all__ = ["Estimate", "PickState", "Placement", "Policy", "start_from_head", "take"]

Estimate = Callable[["Job"], float]
Placement = tuple["Job", tuple[int, ...]]  # a job and the device ids it starts on


@dataclass(frozen=True)
class PickState:
    """All a policy sees when it picks: one instant of the executor or of the dry run."""

    waiting: Sequence[Job]  # in the policy's order: the first is the head of the line
    free: Sequence[int]  # device ids
    running: Sequence[Running]
    now: float
    estimate: Estimate


class Policy(ABC):
    """One placement policy: the order it considers jobs in, and which of them start now."""

    name: ClassVar[str]  # as the user chooses it (``--policy``)

    @abstractmethod
    def order(self, jobs: Sequence[Job], estimate: Estimate, pool_size: int | None) -> list[Job]:
        """The order in which this policy considers ``jobs`` on ``pool_size`` devices."""

    @abstractmethod
    def pick(self, state: PickState) -> list[Placement]:
        """The waiting jobs (in :meth:`order`) that start at ``now``, each with its devices."""


def start_from_head(
    waiting: Sequence[Job], free: Sequence[int]
) -> tuple[list[Placement], list[int]]:
    """Start jobs from the head while they fit, lowest free ids first; and the ids left.

    The started jobs are ``waiting[:len(started)]``: the first that does not fit stops it.
    """
    available = sorted(free)
    started: list[Placement] = []
    for job in waiting:
        if job.devices > len(available):
            break
        devices, available = take(available, job.devices)
        started.append((job, devices))
    return started, available


def take(available: list[int], count: int) -> tuple[tuple[int, ...], list[int]]:
    return tuple(available[:count]), available[count:]
