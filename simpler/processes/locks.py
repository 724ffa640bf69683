"""Per-device exclusive locks, so two runs on one host never share a card.

One lock file per device id in ``SIMPLER_LOCK_DIR`` (default: a folder under the
system temp dir), held with ``flock`` for as long as a job runs on the device.
Files are opened without following symlinks: a planted link cannot redirect
the lock onto some other file.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from simpler.contract.settings import LOCK_DIR_ENV

__all__ = ["DeviceLocks", "hold_devices", "lock_dir"]


def lock_dir() -> Path:
    explicit = os.environ.get(LOCK_DIR_ENV)
    return Path(explicit) if explicit else Path(tempfile.gettempdir()) / "simpler-device-locks"


class DeviceLocks:
    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or lock_dir()
        self._held: dict[int, int] = {}  # device id -> fd

    def try_acquire(self, devices: tuple[int, ...] | list[int]) -> bool:
        """Lock all of ``devices`` or none of them (without waiting)."""
        taken: list[int] = []
        for device in devices:
            if not self._try_one(device):
                self.release(taken)
                return False
            taken.append(device)
        return True

    def release(self, devices: tuple[int, ...] | list[int]) -> None:
        for device in devices:
            fd = self._held.pop(device, None)
            if fd is not None:
                os.close(fd)  # closing the descriptor drops the flock

    def release_all(self) -> None:
        self.release(list(self._held))

    def held(self) -> list[int]:
        return sorted(self._held)

    def _try_one(self, device: int) -> bool:
        if device in self._held:
            return True
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / f"device-{device}.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())  # who holds it, for a human looking
        self._held[device] = fd
        return True


@contextlib.contextmanager
def hold_devices(devices: list[int], poll_s: float = 0.2) -> Iterator[DeviceLocks]:
    """Hold ``devices`` for a whole phase, waiting while another run holds any of them; the
    locks, for a phase that hands its devices on before it ends."""
    locks = DeviceLocks()
    told = False
    while not locks.try_acquire(devices):
        if not told:
            print(f"simpler: waiting for device(s) {devices}: held by another run", file=sys.stderr)
            told = True
        time.sleep(poll_s)
    try:
        yield locks
    finally:
        locks.release_all()
