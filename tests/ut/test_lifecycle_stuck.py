"""An op that cannot be stopped in process (the simulated card's ``stuck`` fault).

No in-process reset is tried: the worker goes poisoned -> skipped (``process_must_end``) and
says that its process must end; the runner's calls on the stuck card return at once.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pooled_workers import device_error, lifecycle_path, started_worker

from simpler import DeviceRuntimeError, runner

NODEID = "t.py::TestStuck::test_launch"
# A stuck card never heals in this process, so each test takes a device id no other test
# uses (tests/conftest.py hands out ids from 100) and cleans nothing up afterwards.
_stuck_devices = itertools.count(90_000)


@pytest.fixture
def stuck_device(faults: Callable[[str], object]) -> Iterator[int]:
    """A device whose next launch in ``NODEID`` gets stuck."""
    faults("stuck@TestStuck#1")
    runner.set_test_context(NODEID, 1)
    yield next(_stuck_devices)


class CountingFactory:
    """simpler's own runners, with every force reset counted: none may be tried."""

    def __init__(self) -> None:
        self.force_resets = 0
        self.runners: list[Any] = []

    def __call__(self, platform: str, device: int) -> Any:
        made = runner.open_runner(platform, device)
        original = made.force_reset

        def counted() -> None:
            self.force_resets += 1
            original()

        made.force_reset = counted
        self.runners.append(made)
        return made


ENDS_WITH_PROCESS = [
    ("created", "healthy", "init_ok"),
    ("healthy", "poisoned", "device_error"),
    ("poisoned", "skipped", "process_must_end"),
]


def test_the_stuck_launch_says_the_process_must_end(stuck_device: int) -> None:
    w = started_worker([], device=stuck_device, worker="gw0")
    error = device_error(w, "noop")
    assert (error.rc, error.where) == (507046, "aclrtSynchronizeStreamWithTimeout")
    assert error.process_must_end
    assert "cannot be stopped in process" in error.message
    assert w.runner is not None and w.runner.process_must_end


def test_no_force_reset_is_tried_and_the_worker_is_skipped(stuck_device: int) -> None:
    records: list[dict[str, Any]] = []
    factory = CountingFactory()
    w = started_worker(records, device=stuck_device, worker="gw0", factory=factory)
    error = device_error(w, "noop")
    assert w.after_test(error, NODEID) is True
    assert factory.force_resets == 0 and len(factory.runners) == 1  # no reset, no rebuild
    assert w.state == "skipped" and not w.runnable and w.must_end_process
    assert lifecycle_path(records) == ENDS_WITH_PROCESS
    ended = records[-1]
    assert (ended["rc"], ended["where"], ended["nodeid"]) == (error.rc, error.where, NODEID)
    assert "cannot be recovered in this process" in w.skip_reason
    assert "a fresh process will re-run this test and the later ones" in w.skip_reason


def test_a_test_that_caught_the_error_still_ends_the_process(stuck_device: int) -> None:
    records: list[dict[str, Any]] = []
    factory = CountingFactory()
    w = started_worker(records, device=stuck_device, worker="gw0", factory=factory)
    device_error(w, "noop")  # the test expected it and passed
    assert w.after_test(None, NODEID) is True
    assert factory.force_resets == 0
    assert lifecycle_path(records) == ENDS_WITH_PROCESS and w.must_end_process


def test_shutdown_finalizes_the_stuck_runner_at_once_and_reports_it_dirty(
    stuck_device: int,
) -> None:
    records: list[dict[str, Any]] = []
    w = started_worker(records, device=stuck_device, worker="gw0")
    w.after_test(device_error(w, "noop"), NODEID)
    assert w.shutdown() == 507046  # not clean; returned instead of waiting on the card
    assert w.state == "closed" and records[-1]["rc"] == 507046


def test_the_stuck_card_stays_stuck_for_every_runner_in_this_process(stuck_device: int) -> None:
    w = started_worker([], device=stuck_device, worker="gw0")
    device_error(w, "noop")
    other = runner.open_runner("a5sim", stuck_device)
    with pytest.raises(DeviceRuntimeError) as init:
        other.init()
    assert init.value.process_must_end
    with pytest.raises(DeviceRuntimeError) as reset:
        other.force_reset()
    assert reset.value.where == "aclrtResetDeviceForce" and "still running" in reset.value.message
    assert other.probe() is False and other.finalize() != 0
    with pytest.raises(DeviceRuntimeError, match="still running"):
        other.soft_reset()
    # Nothing above cleared it: a worker starting now is skipped the same way.
    records: list[dict[str, Any]] = []
    late = started_worker(records, device=stuck_device, worker="gw0")
    assert late.state == "skipped" and late.must_end_process
    assert [r["trigger"] for r in records] == ["device_error", "process_must_end"]
    other.close()


def test_without_recovery_the_worker_stays_poisoned_as_today(stuck_device: int) -> None:
    records: list[dict[str, Any]] = []
    w = started_worker(records, device=stuck_device, worker="gw0", recovery=False)
    w.after_test(device_error(w, "noop"), NODEID)
    assert w.state == "poisoned" and w.runnable and not w.must_end_process
    assert lifecycle_path(records)[-1] == ("healthy", "poisoned", "device_error")


def test_a_hang_still_heals_in_place(fresh_device: int, faults: Callable[[str], object]) -> None:
    faults("hang@TestStuck#1")
    runner.set_test_context(NODEID, 1)
    records: list[dict[str, Any]] = []
    w = started_worker(records, device=fresh_device, worker="gw0")
    error = device_error(w, "noop")
    assert not error.process_must_end
    w.after_test(error, NODEID)
    assert w.state == "rebuilt" and not w.must_end_process
