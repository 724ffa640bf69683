"""The lifecycle calls a runner's ``close()`` at most once, whatever path the worker takes.

Plain Python runners that count their calls (no cppyy): through a heal in place, a give-up
after failed resets, a close that raises, a retirement, and the session's end.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from pooled_workers import ORIGIN, keeping, project_worker

from recovery.lifecycle import PooledWorker
from simpler import DeviceRuntimeError
from simpler.plugin.worker_pool import WorkerPool

CLOSES: Counter[int] = Counter()  # runner id -> close() calls


def _fault(
    rc: int = 507046, where: str = "aclrtSynchronizeStreamWithTimeout"
) -> DeviceRuntimeError:
    return DeviceRuntimeError(rc, where, "fault", device=0, platform="myhw")


class CountingRunner:
    """A project's runner: counts its close() calls; optionally its reset or close fails."""

    made = 0

    def __init__(self, *, reset_fails: bool = False, close_fails: bool = False) -> None:
        CountingRunner.made += 1
        self.id = CountingRunner.made
        self.reset_fails, self.close_fails = reset_fails, close_fails
        self.unusable = False

    def init(self) -> None: ...

    def probe(self) -> bool:
        return True

    def force_reset(self) -> None:
        if self.reset_fails:
            raise _fault(507033, "aclrtResetDeviceForce")

    def finalize(self) -> int:
        return 0

    def close(self) -> None:
        CLOSES[self.id] += 1
        if self.close_fails:
            raise _fault(507899, "rtFree")


@pytest.fixture(autouse=True)
def _counted() -> None:
    CLOSES.clear()
    CountingRunner.made = 0


def _worker(records: list[dict[str, Any]], **runner: bool) -> PooledWorker:
    return project_worker(records, lambda: CountingRunner(**runner), max_attempts=3)


def _closed_once_each() -> None:
    made = set(range(1, CountingRunner.made + 1))
    assert set(CLOSES) == made, f"runners never closed: {made - set(CLOSES)}"
    assert all(calls == 1 for calls in CLOSES.values()), CLOSES


def test_a_heal_in_place_then_the_session_end_closes_each_runner_once() -> None:
    records: list[dict[str, Any]] = []
    worker = _worker(records)
    assert worker.after_test(_fault(), "t.py::test_fault") is True
    assert worker.state == "rebuilt"
    assert worker.after_test(_fault(), "t.py::test_fault_again") is True
    worker.shutdown()
    worker.shutdown()  # a second shutdown (a pool's own, after a retirement) closes nothing
    assert CountingRunner.made == 3
    _closed_once_each()


def test_a_give_up_then_the_session_end_closes_each_runner_once() -> None:
    records: list[dict[str, Any]] = []
    worker = _worker(records, reset_fails=True)
    assert worker.after_test(_fault(), "t.py::test_fault") is True
    assert worker.state == "skipped"
    worker.shutdown()
    worker.shutdown()
    assert CountingRunner.made == 1  # every reset failed on the one runner: nothing rebuilt
    _closed_once_each()


def test_a_close_that_raises_is_not_repeated_by_the_next_attempt_or_the_end() -> None:
    records: list[dict[str, Any]] = []
    worker = _worker(records, close_fails=True)
    # The first runner's close raises a device error: that attempt did not take, and the
    # next one rebuilds on a new runner instead of closing the first one again.
    assert worker.after_test(_fault(), "t.py::test_fault") is True
    assert CLOSES[1] == 1
    assert [r["trigger"] for r in records].count("reset_retry") == 1
    assert worker.state == "rebuilt" and CountingRunner.made == 2
    with pytest.raises(DeviceRuntimeError):
        worker.shutdown()  # the last runner's close raises too, once
    worker.shutdown()
    assert worker.state == "closed"
    _closed_once_each()


def test_a_retired_worker_is_not_closed_again_at_the_session_end() -> None:
    records: list[dict[str, Any]] = []
    pool = WorkerPool(
        "myhw",
        0,
        "main",
        keeping(records),
        origin=ORIGIN,
        recovery=True,
        factory=lambda platform, device: CountingRunner(),
        one_runtime_per_device=True,
    )
    pool.get("first")
    pool.get("second")  # retires (finalizes and closes) the first
    pool.get("first")  # a new worker for it
    pool.shutdown()
    assert CountingRunner.made == 3
    _closed_once_each()
