"""A run that ends before its CI step is killed: ``--deadline DURATION`` (``SIMPLER_DEADLINE``).

The deadline counts from the start of ``simpler run``. Test work must end a reserve before
it, so that the summary is printed in time: nothing starts that its learned duration says
cannot finish by then (a test file, a Resource job, a retry), and at that moment what still
runs is stopped as a job timeout stops it (stack dump, SIGTERM, SIGKILL). The tests that
never ran are counted and named, and the run is red (``deadline 10m reached: 41 not run``).
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass

import psutil

from simpler.usage import UsageError

__all__ = [
    "REPORT_RESERVE_S",
    "Deadline",
    "parse_duration",
    "run_deadline",
]

REPORT_RESERVE_S = 3.0  # what the report phase needs after the tests: summary, files, coverage
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(s|m|h)?")
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_duration(text: str) -> float:
    """``90s``, ``10m``, ``1h``, ``1.5h`` or plain seconds; ValueError for anything else."""
    found = _DURATION.fullmatch(text.strip())
    if found is None:
        raise ValueError(f"{text!r} is not a duration (90s, 10m, 1h)")
    seconds = float(found.group(1)) * _UNITS[found.group(2)]
    if not 0 < seconds < math.inf:
        raise ValueError(f"{text!r} is not a duration above zero")
    return seconds


@dataclass(frozen=True)
class Deadline:
    text: str  # as the user wrote it, for every line that names it
    at: float  # epoch seconds: when the run must be over, summary printed

    @property
    def tests_end_at(self) -> float:
        """When test work must be over: the report's reserve before the deadline."""
        return self.at - REPORT_RESERVE_S

    def left_s(self) -> float:
        """Seconds of test work left (never below zero)."""
        return max(0.0, self.tests_end_at - time.time())

    @property
    def reached(self) -> bool:
        return self.left_s() <= 0

    @property
    def reason(self) -> str:
        return f"deadline {self.text} reached"


def run_deadline(text: str | None, prog: str) -> Deadline | None:
    """The run's deadline from ``--deadline`` or ``SIMPLER_DEADLINE``; a value that does not
    parse, or leaves no time for tests after what the run has spent already, is a UsageError."""
    if not text:
        return None
    try:
        seconds = parse_duration(text)
    except ValueError as error:
        raise UsageError(f"{prog}: --deadline {error}") from None
    started = psutil.Process().create_time()  # the run's clock starts with its process
    deadline = Deadline(text.strip(), started + seconds)
    if deadline.reached:
        spent = time.time() - started
        raise UsageError(
            f"{prog}: --deadline {text} is shorter than this run's start-up "
            f"({spent:.1f} s spent before any test, {REPORT_RESERVE_S:.0f} s kept for the summary)"
        )
    return deadline
