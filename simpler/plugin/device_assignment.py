"""Which device each xdist worker uses: one live worker per device, never shared.

The xdist controller owns the assignment (:class:`DeviceAssigner`): a starting worker is
handed a free device through its ``workerinput``, a worker that goes down frees its device,
and the replacement xdist starts for a crashed worker takes that device. A worker reads its
device with :func:`worker_device`. Pure: no pytest, no xdist.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["ASSIGNED_DEVICE", "DeviceAssigner", "worker_device", "xdist_worker_index"]

# The workerinput key the controller sets: a device id, or None when every device is held.
ASSIGNED_DEVICE = "simpler_device"


def xdist_worker_index(worker_id: str) -> int:
    """``gw3`` -> 3; a run without xdist ("main") uses the first device."""
    return int(worker_id[2:]) if worker_id.startswith("gw") and worker_id[2:].isdigit() else 0


class DeviceAssigner:
    """The devices of one xdist session and the live worker holding each."""

    def __init__(self, devices: Sequence[int]) -> None:
        self._free: list[int] = list(dict.fromkeys(devices))  # handed out from the front
        self._held: dict[str, int] = {}  # xdist worker id -> device
        self._handed_over = False  # the devices went on to the run's Resource phase

    def assign(self, worker: str) -> int | None:
        """A free device for ``worker`` (its own again if it holds one); None when none is free."""
        if worker in self._held:
            return self._held[worker]
        if not self._free:
            return None
        device = self._free.pop(0)
        self._held[worker] = device
        return device

    def free(self, worker: str) -> int | None:
        """``worker`` went down: its device goes first in line, for the worker that replaces it."""
        device = self._held.pop(worker, None)
        if device is not None and not self._handed_over:
            self._free.insert(0, device)
        return device

    def hand_over(self) -> None:
        """The devices are the run's again (its Resource phase uses them): from now on no
        worker gets one, not even the replacement of one that crashes."""
        self._handed_over = True
        self._free.clear()

    def device_of(self, worker: str) -> int | None:
        return self._held.get(worker)

    @property
    def held(self) -> dict[str, int]:
        return dict(self._held)


def worker_device(devices: Sequence[int], workerinput: Mapping[str, Any] | None) -> int | None:
    """This process's device: the controller's assignment, else the ``gwN`` -> Nth rule.

    Without xdist (``workerinput`` None) it is the first device; a process told it holds none,
    None. A ``gwN`` past the last
    device, or a controller that had no free device, gets None: that worker has no device
    of its own, and a test asking it for a ``worker`` fails saying so (never a shared card).
    """
    if not devices:
        return None  # a process of the run that holds no device (--simpler-device none)
    if workerinput is None:
        return devices[0]
    if ASSIGNED_DEVICE in workerinput:
        assigned = workerinput[ASSIGNED_DEVICE]
        return None if assigned is None else int(assigned)
    index = xdist_worker_index(str(workerinput.get("workerid", "")))
    return devices[index] if index < len(devices) else None
