"""The simulated cards of one process, and the faults a run injects into them.

- ``STSIM_FAULT=KERNEL``: the first run of KERNEL in a process times out (code 507046) and
  breaks its worker's context. Only on a first attempt (``SIMPLER_ATTEMPT`` unset or 1).
- ``STSIM_STICKY=1``: that fault also leaves the card failing for the rest of the process:
  a new worker cannot open on it (code 507899), as after an AICore op-timeout.
- ``STSIM_LOCK_DIR``: a card is held by one process at a time, as a driver holds it for the
  process that set the device; another process asking for it gets code 507033.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

__all__ = ["claim", "device_error", "failing", "fault_due", "mark_failing"]

TIMEOUT_CODE = 507046
CARD_FAILING_CODE = 507899
DEVICE_BUSY_CODE = 507033

_held: dict[int, int] = {}  # device -> the descriptor of its lock, for the process's life
_failing: set[int] = set()
_fired: set[str] = set()


def device_error(api: str, device: int, code: int) -> RuntimeError:
    """The project's error: a plain RuntimeError, its API and code in the text."""
    return RuntimeError(f"{api} on device {device} failed with code {code}")


def claim(device: int) -> None:
    """Hold ``device`` for this process (a no-op without ``STSIM_LOCK_DIR``)."""
    folder = os.environ.get("STSIM_LOCK_DIR")
    if not folder or device in _held:
        return
    fd = os.open(Path(folder) / f"stsim-device-{device}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise device_error("rtSetDevice", device, DEVICE_BUSY_CODE) from None
    _held[device] = fd


def failing(device: int) -> bool:
    return device in _failing


def mark_failing(device: int) -> None:
    _failing.add(device)


def fault_due(kernel: str) -> bool:
    """The injected fault fires now: its kernel, a first attempt, not yet fired here."""
    first_attempt = os.environ.get("SIMPLER_ATTEMPT", "1") == "1"
    if os.environ.get("STSIM_FAULT") != kernel or not first_attempt or kernel in _fired:
        return False
    _fired.add(kernel)
    return True
