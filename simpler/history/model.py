"""What the history's readers hand each other: a test's scores and its strip of runs, and
the selection's misses over the shadow runs.

Plain data, shared by the scores, ``show``, the quarantine's suggestions and the page, so
that each renders or decides from one computation instead of its own query.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["CAUSES", "STATES", "LastFailure", "ShadowMisses", "StripMark", "TestScore"]

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


@dataclass(frozen=True)
class ShadowMisses:
    """The failures of shadow runs (``--affected-shadow``: every test ran) that the selection
    would have left out (``shadow_misses.py``)."""

    runs: int  # shadow runs counted
    failures: int  # their failed tests, one per run and test
    missed: int  # of those, the tests the selection did not select
    runs_with_misses: int  # runs with at least one miss
    newest: tuple[tuple[str, str], ...] = ()  # (run id, node id) of misses, newest run first

    @property
    def rate(self) -> float | None:
        """Missed failures / failures; None where there was no failure to miss."""
        return self.missed / self.failures if self.failures else None

    def headline(self) -> str:
        """The figure in one line, as the page and a terminal say it."""
        if not self.runs:
            return "no shadow run (simpler run --affected-shadow) kept in the window"
        text = (
            f"the selection would have missed {self.missed} of {self.failures} failure(s) "
            f"over {self.runs} shadow run(s)"
        )
        if self.rate is None:
            return text
        # A miss is never rounded away to "0%": one miss in a thousand is still one.
        percent = "<1%" if 0 < self.rate < 0.005 else f"{self.rate:.0%}"
        return f"{text} ({percent})"
