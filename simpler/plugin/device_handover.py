"""An L2 session's devices, handed on to the Resource phase before the session ends.

Under ``--simpler-devices-freed FILE`` the xdist controller ends each device worker's process
as soon as it finished its session and names it in FILE (the run waits for each of them to be
gone); once no worker holds a device, FILE says the handover is complete and no device is
handed out again (docs/architecture.md, "The Resource phase on the freed devices").
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from simpler.base.atomic_write import write_atomically
from simpler.plugin.device_assignment import DeviceAssigner

__all__ = ["WORKER_PID", "DeviceHandover", "handover_file", "tell_worker_pid"]

# The workeroutput key a worker's process id travels in, back to its controller.
WORKER_PID = "simpler_pid"


def handover_file(config: pytest.Config) -> Path | None:
    """Where the run asked this session to say its devices are free (Resource tests wait);
    None: it did not ask."""
    named = getattr(config.option, "simpler_devices_freed", None)
    return Path(named) if named else None


def tell_worker_pid(config: pytest.Config) -> None:
    """In an xdist worker: its process id, which ends up in the handover file."""
    output = getattr(config, "workeroutput", None)
    if output is not None:
        output[WORKER_PID] = os.getpid()


class DeviceHandover:
    """The controller's half: each device worker that finished, ended at once and named in
    the file, which says when no worker holds a device any more."""

    def __init__(self, path: Path, devices: DeviceAssigner) -> None:
        self._path = path
        self._devices = devices
        self._ended: list[int] = []  # process ids of device workers that finished their session
        self.handed_over = False

    def worker_down(self, node: Any, error: object | None) -> None:
        """Called before the assigner frees ``node``'s device. A crashed worker hands nothing
        on (xdist replaces it, and the replacement takes its device); a finished one whose
        device was the last held completes the handover."""
        if self.handed_over or error is not None:
            return
        worker = str(node.gateway.id)
        if self._devices.device_of(worker) is None:
            return  # it held no device
        pid = getattr(node, "workeroutput", {}).get(WORKER_PID)
        if pid is None:
            return  # a worker without simpler's plugin: its exit cannot be waited for
        # xdist keeps a finished worker's process until the whole session ends, and does not
        # wait for one whose gateway ended early: FILE names it, so that the run does.
        node.gateway.exit()  # what xdist's teardown does later: it ends its pytest and exits
        self._ended.append(int(pid))
        self.handed_over = set(self._devices.held) == {worker}
        if self.handed_over:
            self._devices.hand_over()
        text = json.dumps({"complete": self.handed_over, "pids": self._ended}) + "\n"
        write_atomically(self._path, lambda stream: stream.write(text.encode()))
