"""The Resource phase started as soon as the L2 session frees the devices, not when it ends.

The session's controller names, in a file, the device workers that finished (their processes
told to exit); once those processes are gone, the L2 phase's wait runs the Resource phase with
the run's device locks let go, holding its output until the session's own has ended
(docs/architecture.md, "The Resource phase on the freed devices").
"""

from __future__ import annotations

import io
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from pathlib import Path

from simpler.processes.locks import DeviceLocks
from simpler.processes.reaper import pid_running

__all__ = ["DevicesFreed", "devices_handover"]

# How often the L2 phase's wait looks for the controller's file while Resource tests wait.
POLL_S = 0.05
# The most an ended worker may take to exit: execnet interrupts it after 5 s, ends it after 15.
PROCESS_EXIT_S = 20.0


class DevicesFreed:
    """One L2 session's handover: the file to watch, the locks to let go, what to start."""

    def __init__(self, path: Path, locks: DeviceLocks, start: Callable[[], None]) -> None:
        self.path = path
        self._locks = locks
        self._start = start
        self._held_output = io.StringIO()

    @property
    def flag(self) -> str:
        return f"--simpler-devices-freed={self.path}"

    def ready(self) -> bool:
        """The controller says no worker holds a device, and every process that held one is
        gone."""
        complete, pids = self._named()
        return complete and not any(pid_running(pid) for pid in pids)

    def wait_for_named_processes(self, timeout_s: float = PROCESS_EXIT_S) -> None:
        """After the session: until the device workers it ended early are gone (its
        controller does not wait for them), so no later phase finds a card still held."""
        give_up = time.monotonic() + timeout_s
        while any(pid_running(pid) for pid in self._named()[1]) and time.monotonic() < give_up:
            time.sleep(POLL_S)

    def _named(self) -> tuple[bool, list[int]]:
        """Whether the handover is complete, and the processes the controller ended early."""
        try:
            said = json.loads(self.path.read_text(encoding="utf-8"))
            return bool(said["complete"]), [int(pid) for pid in said["pids"]]
        except (OSError, ValueError, KeyError, TypeError):
            return False, []  # not written yet (it is renamed into place whole)

    def hand_over(self) -> None:
        """Start what waits for the devices (the Resource phase), the run's locks let go."""
        self._locks.release_all()
        with redirect_stdout(self._held_output):
            self._start()

    def print_held_output(self) -> None:
        held = self._held_output.getvalue()
        if held:
            sys.stdout.write(held)
            sys.stdout.flush()


@contextmanager
def devices_handover(
    locks: DeviceLocks, start: Callable[[], None] | None
) -> Iterator[DevicesFreed | None]:
    """A handover for one L2 session when something waits for its devices, else None."""
    if start is None:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="simpler-handover-") as folder:
        yield DevicesFreed(Path(folder) / "devices-freed.json", locks, start)
