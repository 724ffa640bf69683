"""The lifecycle's choices are its table's: a trigger's edges carry the conditions, the worker
only fires the trigger.

Plain Python runners (no cppyy) whose force resets fail a given number of times.
"""

from __future__ import annotations

from typing import Any

import pytest
from pooled_workers import started_worker

import recovery.lifecycle
from recovery.lifecycle import PooledWorker
from recovery.table import RUNNABLE_STATES, TRANSITIONS
from simpler import DeviceRuntimeError


def _fault(*, must_end: bool = False) -> DeviceRuntimeError:
    return DeviceRuntimeError(
        507046, "sync", "fault", device=0, platform="myhw", process_must_end=must_end
    )


class FlakyResetRunner:
    """A project's runner whose first ``failures`` force resets (all runners together) fail."""

    def __init__(self, failures: list[int]) -> None:
        self.failures = failures  # shared by the runners of one worker: a one-item counter
        self.unusable = False

    def init(self) -> None: ...

    def probe(self) -> bool:
        return True

    def force_reset(self) -> None:
        if self.failures[0] > 0:
            self.failures[0] -= 1
            raise DeviceRuntimeError(507033, "reset", "no", device=0, platform="myhw")

    def finalize(self) -> int:
        return 0

    def close(self) -> None: ...


def _worker(reset_failures: int, records: list[dict[str, Any]], **options: Any) -> PooledWorker:
    failures = [reset_failures]
    return started_worker(
        records,
        platform="myhw",
        runtime="rt",
        worker="gw0",
        factory=lambda platform, device: FlakyResetRunner(failures),
        **options,
    )


def _edges(w: PooledWorker, trigger: str, source: str) -> list[tuple[str, str, list[str]]]:
    """The edges the worker's machine tries for ``trigger`` from ``source``, in order."""
    return [
        (
            edge.label,
            edge.dest,
            [("" if c.target else "!") + str(c.func) for c in edge.conditions],
        )
        for edge in w._machine.events[trigger].transitions[source]
    ]


def test_each_choice_is_a_trigger_whose_edges_carry_the_conditions() -> None:
    w = _worker(0, [])
    assert _edges(w, "heal", "poisoned") == [
        ("process_must_end", "skipped", ["recovery", "needs_fresh_process"]),
        ("start_force_reset", "force_reset", ["recovery"]),
    ]
    assert _edges(w, "attempt_done", "force_reset") == [
        ("rebuild_ok", "rebuilt", ["reset_took"]),
        ("reset_retry", "force_reset", ["attempts_left"]),
        ("give_up", "skipped", []),
    ]


# (reset failures, the error, recovery) -> the edges taken after device_error, and the end.
CASES = {
    "reset succeeds": (0, _fault(), True, ["start_force_reset", "rebuild_ok"], "rebuilt"),
    "reset fails, budget left": (
        2,
        _fault(),
        True,
        ["start_force_reset", "reset_retry", "reset_retry", "rebuild_ok"],
        "rebuilt",
    ),
    "budget exhausted": (
        3,
        _fault(),
        True,
        ["start_force_reset", "reset_retry", "reset_retry", "give_up"],
        "skipped",
    ),
    "process must end": (0, _fault(must_end=True), True, ["process_must_end"], "skipped"),
    "recovery off": (0, _fault(must_end=True), False, [], "poisoned"),
}


@pytest.mark.parametrize("case", CASES)
def test_each_case_lands_where_the_table_says(case: str) -> None:
    failures, error, recovery_on, edges, end = CASES[case]
    records: list[dict[str, Any]] = []
    w = _worker(failures, records, max_attempts=3, recovery=recovery_on)
    assert w.after_test(error, "t.py::t") is True
    assert [r["trigger"] for r in records] == ["init_ok", "device_error", *edges]
    assert w.state == end
    assert w.runnable == (end in RUNNABLE_STATES or not recovery_on)
    assert w.must_end_process == (case == "process must end")


def test_the_worker_follows_the_table_it_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without its process_must_end edge, heal resets even a card whose op cannot be stopped:
    # nothing outside the table chose to end the process.
    table = [edge for edge in TRANSITIONS if edge.get("label") != "process_must_end"]
    monkeypatch.setattr(recovery.lifecycle, "TRANSITIONS", table)
    records: list[dict[str, Any]] = []
    w = _worker(0, records)
    w.after_test(_fault(must_end=True), "t.py::t")
    assert [r["trigger"] for r in records][-2:] == ["start_force_reset", "rebuild_ok"]
    assert w.state == "rebuilt" and not w.must_end_process


def test_the_runnable_states_are_the_tagged_ones() -> None:
    assert RUNNABLE_STATES == ("healthy", "rebuilt")
