"""The simulated card reproduces the hardware team's measurements, on both sims.

Each scenario uses cards no other test touched (``fresh_device``), since a
card's sticky error is process-global exactly as on the hardware.
"""

from __future__ import annotations

import linecache
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest
from pooled_workers import device_error

from simpler import DeviceRuntimeError
from simpler.runner import Runner, open_runner, set_test_context
from simpler.runner.platforms import OP_TIMEOUT, POISONED_INIT


def _ready(platform: str, device: int) -> Runner:
    r = open_runner(platform, device)
    r.init()
    return r


def _ready_with(faults: Callable[[str], object], spec: str, platform: str, device: int) -> Runner:
    """A ready runner, in a process whose injected faults are ``spec``."""
    faults(spec)
    return _ready(platform, device)


def test_spin_is_reaped_with_the_platforms_op_timeout(platform: str, fresh_device: int) -> None:
    error = device_error(_ready(platform, fresh_device))
    assert (error.rc, error.where) == OP_TIMEOUT[platform]
    assert (error.device, error.platform) == (fresh_device, platform)


def test_within_process_cascade_ten_of_ten(platform: str, fresh_device: int) -> None:
    cascades = 0
    for _ in range(10):
        victim = _ready(platform, fresh_device)
        device_error(victim)
        with pytest.raises(DeviceRuntimeError) as fast:
            victim.run("noop")
        with pytest.raises(DeviceRuntimeError) as reinit:
            open_runner(platform, fresh_device).init()
        if (
            fast.value.rc == -1
            and "unusable" in str(fast.value)
            and (
                reinit.value.rc,
                reinit.value.where,
            )
            == POISONED_INIT[platform]
        ):
            cascades += 1
        victim.force_reset()
    assert cascades == 10


def test_a_healthy_runner_on_a_poisoned_card_fails_with_the_poisoned_code(
    platform: str, fresh_device: int
) -> None:
    bystander = _ready(platform, fresh_device)
    device_error(_ready(platform, fresh_device))
    with pytest.raises(DeviceRuntimeError) as caught:
        bystander.run("noop")
    assert (caught.value.rc, caught.value.where) == POISONED_INIT[platform]
    assert bystander.unusable


def test_soft_reset_does_not_recover(platform: str, fresh_device: int) -> None:
    r = _ready(platform, fresh_device)
    device_error(r)
    with pytest.raises(DeviceRuntimeError) as caught:
        r.soft_reset()
    assert (caught.value.rc, caught.value.where) == POISONED_INIT[platform]
    assert r.unusable and not r.probe()


def test_force_reset_recovers_ten_of_ten(platform: str, fresh_device: int) -> None:
    recovered = 0
    for _ in range(10):
        r = _ready(platform, fresh_device)
        device_error(r)
        r.force_reset()
        rebuilt = _ready(platform, fresh_device)
        out = rebuilt.run("vector_add", np.ones(4, np.float32), np.ones(4, np.float32))
        recovered += int(rebuilt.probe() and out is not None and bool((out == 2).all()))
    assert recovered == 10


def test_finalize_force_resets_an_unusable_runner_and_confirms_the_card(
    platform: str, fresh_device: int
) -> None:
    r = _ready(platform, fresh_device)
    device_error(r)
    assert r.finalize() == 0
    assert r.probe() and not r.unusable


def test_finalize_reports_failure_when_the_force_reset_fails(
    platform: str, fresh_device: int, faults: Callable[[str], object]
) -> None:
    r = _ready_with(faults, "force_reset_fail", platform, fresh_device)
    device_error(r)
    assert r.finalize() == OP_TIMEOUT[platform][0]
    assert not r.probe()
    with pytest.raises(DeviceRuntimeError, match="aclrtResetDeviceForce"):
        r.force_reset()


def test_force_reset_clears_only_its_card_while_another_keeps_running(
    platform: str, fresh_device: int
) -> None:
    poisoned, busy = fresh_device, fresh_device + 1000
    victim = _ready(platform, poisoned)
    device_error(victim)
    worker = _ready(platform, busy)
    a, b = np.ones((160, 160), np.float32), np.ones((160, 160), np.float32)
    results: list[bool] = []

    def keep_running() -> None:
        for _ in range(20):
            out = worker.run("matmul", a, b)
            results.append(out is not None and bool((out == 160).all()))

    thread = threading.Thread(target=keep_running)
    thread.start()
    for _ in range(5):
        victim.force_reset()
        device_error(_ready(platform, poisoned))
    victim.force_reset()
    thread.join()
    assert results == [True] * 20
    assert worker.probe() and not worker.unusable
    worker.force_reset()


def test_a_fresh_process_sees_a_clean_card(platform: str, fresh_device: int) -> None:
    device_error(_ready(platform, fresh_device))
    script = (
        "from simpler.runner import open_runner\n"
        f"r = open_runner({platform!r}, {fresh_device})\n"
        "r.init(); r.run('noop'); print(r.probe())\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert child.stdout.strip() == "True"


def test_drain_reports_the_sticky_error(platform: str, fresh_device: int) -> None:
    r = _ready(platform, fresh_device)
    device_error(r)
    with pytest.raises(DeviceRuntimeError) as caught:
        r.drain(100)
    assert caught.value.rc == OP_TIMEOUT[platform][0]
    assert caught.value.where == "aclrtSynchronizeDeviceWithTimeout"


def test_drain_false_negative_reports_success_while_probe_says_poisoned(
    platform: str, fresh_device: int, faults: Callable[[str], object]
) -> None:
    r = _ready_with(faults, "drain_false_negative", platform, fresh_device)
    device_error(r)
    r.drain(100)  # wrongly says all is well, as seen on a2a3 hardware
    assert not r.probe()


def test_init_fail_fault_fails_init_with_the_platforms_code(
    platform: str, fresh_device: int, faults: Callable[[str], object]
) -> None:
    faults("init_fail")
    with pytest.raises(DeviceRuntimeError) as caught:
        _ready(platform, fresh_device)
    assert caught.value.rc == POISONED_INIT[platform][0]


def test_launch_fail_matches_the_selector_and_attempt(
    platform: str, fresh_device: int, faults: Callable[[str], object]
) -> None:
    r = _ready_with(faults, "launch_fail@TestAdd::test_big#1", platform, fresh_device)
    set_test_context("tests/st/test_add.py::TestAdd::test_big", attempt=2)
    r.run("noop")  # attempt 2 is not selected
    set_test_context("tests/st/test_add.py::TestMul::test_big", attempt=1)
    r.run("noop")  # another test is not selected
    set_test_context("tests/st/test_add.py::TestAdd::test_big", attempt=1)
    error = device_error(r, "noop")
    assert (error.rc, error.where) == (207001, "rtKernelLaunchWithHandleV2")
    assert not r.probe()


def test_hang_fault_turns_a_selected_launch_into_an_op_timeout(
    platform: str, fresh_device: int, faults: Callable[[str], object]
) -> None:
    r = _ready_with(faults, "hang@test_victim", platform, fresh_device)
    set_test_context("tests/st/test_x.py::test_victim", attempt=3)
    error = device_error(r, "vector_add", np.ones(2, np.float32), np.ones(2, np.float32))
    assert (error.rc, error.where) == OP_TIMEOUT[platform]


def test_malformed_sim_faults_env_is_a_value_error(monkeypatch: pytest.MonkeyPatch) -> None:
    script = "from simpler.runner import open_runner\nopen_runner('a5sim', 0)\n"
    env = {"SIMPLER_SIM_FAULTS": "hang@x#zero"}
    child = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env={**_env(), **env}
    )
    assert child.returncode == 1
    assert "ValueError: SIMPLER_SIM_FAULTS: attempt in 'hang@x#zero'" in child.stderr


def _inside_the_native_run(thread: threading.Thread) -> bool:
    """``thread`` stands in ``Runner.run`` on its call into the card, right now."""
    frame = sys._current_frames().get(thread.ident or 0)
    return (
        frame is not None
        and frame.f_code is Runner.run.__code__
        and "native.run(" in linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    )


def test_long_calls_release_the_gil(platform: str, fresh_device: int) -> None:
    r = _ready(platform, fresh_device)
    errors: list[DeviceRuntimeError] = []
    hanging = threading.Thread(target=lambda: errors.append(device_error(r)))
    # No forced switches: this thread can only run Python while the other waits on the card
    # if the call into the card let go of the GIL.
    previous = sys.getswitchinterval()
    sys.setswitchinterval(60.0)
    seen_inside = False
    try:
        hanging.start()
        while hanging.is_alive() and not seen_inside:
            seen_inside = _inside_the_native_run(hanging)
            time.sleep(0.0005)  # gives up the GIL so that the other thread walks to the call
    finally:
        sys.setswitchinterval(previous)
        hanging.join(60)  # only guards against a hang: the op-timeout reaps it at once
    assert seen_inside, "no Python ran while the card held the other thread"
    assert [(e.rc, e.where) for e in errors] == [OP_TIMEOUT[platform]]


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)
