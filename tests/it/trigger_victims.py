"""The trigger-then-victims suite, written once: one test a device fault is injected into, then
the classes queued behind it on the same pooled worker.

The fault comes from outside (``--simpler-sim-fault hang@TestTrigger``, ``SIMPLER_SIM_FAULTS``),
so the trigger's code is an ordinary launch, as in a real suite. A scenario file names its
classes, so their node ids read in the file: ``TestTrigger, TestVictim1 = HANG.classes()``.
Scenario files import this module as ``trigger_victims``: pytest puts tests/it on sys.path
when it loads tests/it/conftest.py, before it collects any scenario under it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["FORWARDED", "HANG", "STUCK", "TriggerVictims", "add"]


def add(worker: Any) -> None:
    """A launch with a result to check: a card that is not healthy gets it wrong or raises."""
    out = worker.run("vector_add", np.ones(4, np.float32), np.full(4, 2, np.float32))
    assert out.tolist() == [3.0] * 4


def noop(worker: Any) -> None:
    worker.run("noop")


LAUNCHES: dict[str, Callable[[Any], None]] = {"add": add, "noop": noop}


@dataclass(frozen=True)
class TriggerVictims:
    """One suite file: ``TestTrigger::test_launch``, then ``TestVictim<i>::test_<kind>``."""

    path: str  # as the run's node ids spell it
    victim_kinds: tuple[str, ...]  # "noop" or "add", in run order

    @property
    def trigger(self) -> str:
        return f"{self.path}::TestTrigger::test_launch"

    @property
    def victims(self) -> list[str]:
        return [
            f"{self.path}::TestVictim{i}::test_{kind}"
            for i, kind in enumerate(self.victim_kinds, start=1)
        ]

    def classes(self) -> tuple[type, ...]:
        """TestTrigger, then the victims, each with its one test."""
        return (_test_class("TestTrigger", "test_launch", add), *self.victim_classes())

    def victim_classes(self) -> tuple[type, ...]:
        return tuple(
            _test_class(f"TestVictim{i}", f"test_{kind}", LAUNCHES[kind])
            for i, kind in enumerate(self.victim_kinds, start=1)
        )


def _test_class(name: str, test_name: str, launch: Callable[[Any], None]) -> type:
    def test(self: object, worker: Any) -> None:
        launch(worker)

    test.__name__ = test.__qualname__ = test_name
    return type(name, (), {test_name: test, "__qualname__": name})


SCENARIOS = "tests/it/scenarios"
# Five victims, mixed kinds: a victim that only launches and one that checks a result.
HANG = TriggerVictims(
    f"{SCENARIOS}/scenario_hang_victims.py", ("noop", "noop", "add", "noop", "add")
)
STUCK = TriggerVictims(f"{SCENARIOS}/scenario_stuck.py", ("noop", "add", "noop"))
FORWARDED = TriggerVictims(f"{SCENARIOS}/forwarded/scenario_pooled.py", ("noop", "add"))
