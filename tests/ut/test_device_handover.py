"""The L2 session hands its devices on to the Resource phase before it ends: the controller's
file, written once the last worker that held a device has finished, never for a crash; no
device handed to a worker afterwards; the card's worker ending instead of taking tests that
use no device; and the run's side, which waits until the named processes are gone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psutil
import pytest
from test_xdist_slots import IDS, USES_CARD, _one_card_two_workers, _routing, _run_to_the_end

from simpler.orchestrator.device_handover import DevicesFreed, devices_handover
from simpler.plugin.device_assignment import DeviceAssigner
from simpler.plugin.device_handover import WORKER_PID, DeviceHandover
from simpler.processes.locks import DeviceLocks


def _node(worker: str, pid: int | None) -> Any:
    output = {WORKER_PID: pid} if pid is not None else {}
    gateway = SimpleNamespace(id=worker, exited=False)
    gateway.exit = lambda: setattr(gateway, "exited", True)
    return SimpleNamespace(gateway=gateway, workeroutput=output)


def _down(handover: DeviceHandover, devices: DeviceAssigner, node: Any, error: object) -> None:
    """As CrashWatch does: the handover first, then the assigner frees the device."""
    handover.worker_down(node, error)
    devices.free(node.gateway.id)


def test_the_file_names_every_device_worker_once_the_last_one_finished(tmp_path: Path) -> None:
    freed = tmp_path / "freed.json"
    devices = DeviceAssigner([0, 1])
    for worker in ("gw0", "gw1", "gw2"):
        devices.assign(worker)  # gw2: no device left for it
    handover = DeviceHandover(freed, devices)
    gw0, gw2 = _node("gw0", 100), _node("gw2", 102)
    _down(handover, devices, gw0, None)
    _down(handover, devices, gw2, None)  # held no device
    # gw1 still holds device 1; gw0's process ends now, and the run is told to wait for it.
    assert json.loads(freed.read_text()) == {"complete": False, "pids": [100]}
    assert gw0.gateway.exited and not gw2.gateway.exited
    _down(handover, devices, _node("gw1", 101), None)
    assert json.loads(freed.read_text()) == {"complete": True, "pids": [100, 101]}
    assert handover.handed_over


def test_a_crashed_device_worker_hands_nothing_on_its_replacement_takes_the_card(
    tmp_path: Path,
) -> None:
    freed = tmp_path / "freed.json"
    devices = DeviceAssigner([0])
    devices.assign("gw0")
    handover = DeviceHandover(freed, devices)
    _down(handover, devices, _node("gw0", 100), "crashed")
    assert not freed.exists()
    assert devices.assign("gw1") == 0  # xdist's replacement
    _down(handover, devices, _node("gw1", 101), None)
    assert json.loads(freed.read_text()) == {"complete": True, "pids": [101]}


def test_after_the_handover_no_worker_gets_a_device(tmp_path: Path) -> None:
    devices = DeviceAssigner([0])
    devices.assign("gw0")
    handover = DeviceHandover(tmp_path / "freed.json", devices)
    _down(handover, devices, _node("gw0", 100), None)
    # A worker without a device crashes after it: its replacement must not take the card.
    assert devices.assign("gw2") is None
    assert devices.held == {}


def test_the_card_worker_ends_instead_of_taking_free_tests_when_resource_tests_wait(
    tmp_path: Path,
) -> None:
    waiting = _routing(tmp_path, workers=2)
    waiting.config.option.simpler_devices_freed = str(tmp_path / "freed.json")
    gw0, gw1 = _one_card_two_workers(waiting, IDS)
    ran = _run_to_the_end(waiting, [gw0, gw1])
    card_files = {nodeid.split("::")[0] for nodeid in USES_CARD}
    assert gw0.shutting_down
    assert all(n in USES_CARD or n.split("::")[0] in card_files for n in ran["gw0"]), ran
    assert sorted(ran["gw0"] + ran["gw1"]) == sorted(IDS)  # every test still runs once
    # Nothing waits for the card: its worker takes free tests too (the files' own share).
    plain = _routing(tmp_path, workers=2)
    gw0, gw1 = _one_card_two_workers(plain, IDS)
    ran = _run_to_the_end(plain, [gw0, gw1])
    assert any(n.split("::")[0] not in card_files for n in ran["gw0"]), ran


def _exited_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(done.stdout)


def _say(handover: DevicesFreed, pids: list[int], *, complete: bool = True) -> None:
    handover.path.write_text(json.dumps({"complete": complete, "pids": pids}))


def test_the_run_hands_over_only_once_every_named_process_is_gone(tmp_path: Path) -> None:
    started: list[str] = []
    with devices_handover(DeviceLocks(tmp_path / "locks"), lambda: started.append("resource")) as (
        handover
    ):
        assert isinstance(handover, DevicesFreed)
        assert handover.flag == f"--simpler-devices-freed={handover.path}"
        assert not handover.ready()  # no file yet
        alive = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                                 stdin=subprocess.PIPE)  # fmt: skip
        try:
            _say(handover, [_exited_pid(), alive.pid])
            assert not handover.ready()
        finally:
            alive.communicate(b"")
        _say(handover, [_exited_pid()], complete=False)
        assert not handover.ready()  # a worker still holds a device
        _say(handover, [_exited_pid()])
        assert handover.ready()
        handover.hand_over()
    assert started == ["resource"]


def test_after_the_session_the_run_waits_for_the_workers_it_ended_early(tmp_path: Path) -> None:
    freed = DevicesFreed(tmp_path / "freed.json", DeviceLocks(tmp_path), lambda: None)
    ending = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                              stdin=subprocess.PIPE)  # fmt: skip
    try:
        _say(freed, [ending.pid], complete=False)  # never complete: a device worker crashed
        assert ending.stdin is not None
        ending.stdin.close()  # it ends now, as a worker told to exit does
        freed.wait_for_named_processes()
        assert psutil.Process(ending.pid).status() == psutil.STATUS_ZOMBIE
    finally:
        ending.wait()


def test_a_zombie_has_freed_its_card(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, not yet reaped
        freed = DevicesFreed(tmp_path / "freed.json", DeviceLocks(tmp_path), lambda: None)
        _say(freed, [child.pid])
        assert freed.ready()
    finally:
        child.wait()


def test_the_run_holds_what_the_resource_phase_prints_until_the_session_ended(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    locks = DeviceLocks(tmp_path / "locks")
    assert locks.try_acquire([0])
    freed = DevicesFreed(tmp_path / "freed.json", locks, lambda: print("PASS resource child"))
    freed.hand_over()
    assert locks.held() == []  # the Resource phase's children lock the cards themselves
    assert capsys.readouterr().out == ""
    freed.print_held_output()
    assert capsys.readouterr().out == "PASS resource child\n"
