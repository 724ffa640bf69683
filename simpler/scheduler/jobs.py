"""What the scheduler places and what it hands back: plain data that crosses processes as JSON."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["DEVICES_PLACEHOLDER", "Job", "JobResult", "Running"]

DEVICES_PLACEHOLDER = "{devices}"


@dataclass(frozen=True)
class Job:
    """A command that needs ``devices`` cards at once; ``{devices}`` in argv becomes their range."""

    label: str
    devices: int
    argv: tuple[str, ...]
    est_s: float | None = None  # the job's own estimate (marker or JOBS.json); None: look it up
    timeout_s: float | None = None
    env: tuple[tuple[str, str], ...] = ()
    nodeid: str | None = None

    def command_for(self, device_spec: str) -> list[str]:
        return [arg.replace(DEVICES_PLACEHOLDER, device_spec) for arg in self.argv]


@dataclass(frozen=True)
class Running:
    """A started job, as a placement policy sees it."""

    job: Job
    devices: tuple[int, ...]
    started_s: float
    expected_end_s: float


@dataclass
class JobResult:
    label: str
    returncode: int | None  # None: killed by a signal
    signal: str | None  # e.g. "SIGSEGV"
    devices: list[int]
    duration_s: float
    timed_out: bool = False
    reached_summary: bool = True  # False: the child died before pytest's summary line
    tail: str = ""
    log: str = ""
    nodeid: str | None = None
    start_s: float = 0.0  # since the schedule began
    end_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    pid: int | None = None  # the child's, None when it never started

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and self.signal is None

    def serialize(self) -> dict[str, Any]:
        return asdict(self)
