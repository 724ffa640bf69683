"""One live xdist worker per device: the controller's assignment and a worker's reading of it."""

from __future__ import annotations

from simpler.plugin.device_assignment import ASSIGNED_DEVICE, DeviceAssigner, worker_device


def test_each_starting_worker_gets_a_device_of_its_own() -> None:
    devices = DeviceAssigner([4, 5, 6])
    assert [devices.assign(w) for w in ("gw0", "gw1", "gw2")] == [4, 5, 6]
    assert devices.held == {"gw0": 4, "gw1": 5, "gw2": 6}


def test_asking_again_returns_the_same_device() -> None:
    devices = DeviceAssigner([0, 1])
    assert devices.assign("gw0") == 0
    assert devices.assign("gw0") == 0
    assert devices.assign("gw1") == 1


def test_no_free_device_is_none_never_a_shared_one() -> None:
    devices = DeviceAssigner([0, 1])
    devices.assign("gw0")
    devices.assign("gw1")
    assert devices.assign("gw2") is None
    assert devices.held == {"gw0": 0, "gw1": 1}


def test_a_replacement_takes_the_device_of_the_worker_that_died() -> None:
    devices = DeviceAssigner([0, 1, 2])
    for worker in ("gw0", "gw1", "gw2"):
        devices.assign(worker)
    assert devices.free("gw1") == 1
    assert devices.device_of("gw1") is None
    assert devices.assign("gw3") == 1
    assert devices.free("gw0") == 0
    assert devices.free("gw3") == 1
    # The most recently freed device goes first: gw3's replacement takes device 1.
    assert devices.assign("gw4") == 1
    assert devices.assign("gw5") == 0
    assert devices.held == {"gw2": 2, "gw4": 1, "gw5": 0}


def test_a_device_left_unused_by_fewer_workers_is_handed_out_after_a_freed_one() -> None:
    devices = DeviceAssigner([0, 1, 2])  # -n 2 on three devices
    devices.assign("gw0")
    devices.assign("gw1")
    devices.free("gw0")
    assert devices.assign("gw2") == 0
    assert devices.assign("gw3") == 2


def test_freeing_a_worker_that_holds_nothing_changes_nothing() -> None:
    devices = DeviceAssigner([0])
    assert devices.free("gw7") is None
    assert devices.assign("gw0") == 0
    assert devices.free("gw0") == 0
    assert devices.free("gw0") is None
    assert devices.assign("gw1") == 0


def test_duplicate_devices_are_handed_out_once() -> None:
    devices = DeviceAssigner([3, 3])
    assert devices.assign("gw0") == 3
    assert devices.assign("gw1") is None


def test_a_worker_reads_the_controllers_assignment() -> None:
    assert worker_device([0, 1], {"workerid": "gw5", ASSIGNED_DEVICE: 1}) == 1
    assert worker_device([0, 1], {"workerid": "gw0", ASSIGNED_DEVICE: None}) is None


def test_without_an_assignment_gw_n_uses_the_nth_device_and_never_clamps() -> None:
    assert worker_device([4, 5], {"workerid": "gw0"}) == 4
    assert worker_device([4, 5], {"workerid": "gw1"}) == 5
    assert worker_device([4, 5], {"workerid": "gw2"}) is None  # not device 5 again


def test_without_xdist_the_first_device() -> None:
    assert worker_device([7, 8], None) == 7
