"""How many processes a run keeps busy at once: its slots (``-j N``, ``$SIMPLER_JOBS``, else
every CPU this process may use, as ``pytest -n auto``, and never fewer than the devices, so
that no card named on ``--device`` idles for want of a slot: a device's tests mostly wait on
the card, not the CPU). A budget apart from the devices, as CTest's ``-j`` is apart from its
resource groups: a test that uses no device takes any slot; one that uses a device takes a
slot and waits for its device, which is never shared.
"""

from __future__ import annotations

import os

from simpler.contract.settings import JOBS_ENV, positive_int_env
from simpler.usage import UsageError

__all__ = ["cpu_count", "run_slots"]


def cpu_count() -> int:
    """The CPUs this process may run on (its affinity, where the platform says), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def run_slots(explicit: int | None, devices: int, prog: str) -> int:
    """``-j`` as given (argparse has refused 0, negatives and words), else ``$SIMPLER_JOBS``,
    else the CPU count or the ``devices``, the more; a bad ``$SIMPLER_JOBS`` is a usage error
    naming it."""
    if explicit is not None:
        return explicit
    try:
        return positive_int_env(JOBS_ENV, max(cpu_count(), devices))
    except ValueError as error:
        raise UsageError(f"{prog}: {error}") from None
