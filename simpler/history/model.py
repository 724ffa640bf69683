"""What the history's readers hand each other: a test's scores and its strip of runs.

Plain data, shared by the scores, ``show``, the quarantine's suggestions and the page, so
that each renders or decides from one computation instead of its own query.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["CAUSES", "STATES", "LastFailure", "StripMark", "TestScore"]

CAUSES = ("test", "device", "infra")
# A test's state over the window, worst first in the order a reader acts on them.
STATES = ("broken", "flaky", "device-sensitive", "stable")


@dataclass(frozen=True)
class LastFailure:
    run_id: str
    commit: str | None
    message: str


@dataclass(frozen=True)
class TestScore:
    """One test over the runs of the window (``flaky --format json`` writes these fields)."""

    __test__ = False  # not a pytest test class, whatever its name

    nodeid: str
    runs: int  # runs in the window in which the test had a verdict
    passed: int  # of those, runs whose final outcome was green
    failed_test: int  # runs with a test-caused failed attempt (counts against the test)
    failed_device: int  # runs with a device-attributed failed attempt (and no test-caused one)
    failed_infra: int  # runs with an infra-attributed failed attempt (and no other)
    pass_on_retry: int  # runs where a test-caused failure was followed by a pass (flaky)
    same_commit_flips: int  # commits on which the test both failed (test-caused) and passed
    flip_rate: float  # pass<->fail changes between consecutive runs / (runs - 1)
    flake_rate: float  # test-caused failing runs / runs
    flake_rate_low: float  # Wilson 95% interval of flake_rate
    flake_rate_high: float
    state: str  # one of STATES
    last_failure: LastFailure | None = None
    devices: tuple[str, ...] = field(default_factory=tuple)  # where test-caused failures fell

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("devices")
        return data


@dataclass(frozen=True)
class StripMark:
    """One run of a test, oldest first: ``.`` pass, ``F`` fail, ``R`` failed then passed
    (recovered or flaky), ``D`` a failure attributed to the device, ``I`` to infrastructure,
    ``s`` skipped, ``Q`` a quarantined failure."""

    run_id: str
    commit: str | None
    mark: str
    started: float | None = None
