"""What the plan places: a unit of work with its device count and its expected seconds."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Unit"]


@dataclass(frozen=True)
class Unit:
    key: str  # a node id, an L2 file, or a registry index as text
    devices: int
    est_s: float
    source: str = "estimate"  # where est_s came from: durations, estimate or count
    runner_devices: int | None = None  # an explicit class (a device_count marker)
    phase: str | None = None  # the phase that runs it (l2, resource); None: a registration
    # How the user wrote it, for messages: a registry index means nothing to them, its file
    # and suite do. None: the key (a node id or a file is already what they wrote).
    shown: str | None = None

    @property
    def name(self) -> str:
        return self.shown or self.key

    @property
    def movable_up(self) -> bool:
        """An L2 file may run on a larger runner's idle devices; a test its marker placed
        and a Resource test stay where they were put."""
        return self.phase == "l2" and self.runner_devices is None
