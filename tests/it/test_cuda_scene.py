"""The scene suite on platform cuda, with one real fault kernel injected.

On the fake driver (tests/fake_cuda) both answers a card can give are run: a reset that
heals (the worker is rebuilt in place) and one that does not (the tests behind the fault
are poison-skipped and recovered in a fresh process). On a machine with an NVIDIA driver
the same run goes to the real GPU; elsewhere that test is skipped with the driver's line,
and fails when asking for the driver crashes (a broken lookup must not look like "no GPU").
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from processes import sim_faults

TRIGGER = (
    "tests/st/test_vector_add.py::TestVectorAddOnRingbuffer::"
    "test_operand_order_does_not_change_the_sum"
)
SPIN_TESTS = "tests/st/test_op_timeout.py"  # a GPU cannot reap a spin: skipped on cuda
PHASE_RANK = {"l2": 0, "retry": 1}


def _scene(simpler_run: Any, devices: str, env: dict[str, str]) -> Any:
    return simpler_run.suite(
        "tests/st",
        *sim_faults(f"illegal_address@{TRIGGER.split('/')[-1]}"),
        platform="cuda",
        device=devices,
        options=("--phases", "l2,retry,report"),
        env=env,
        timeout=600,
    )


def _fake_scene(simpler_run: Any, driver: str, *, reset_heals: bool) -> tuple[Any, dict[str, Any]]:
    """The scene on the fake driver, whose force reset heals the card or not: the run, and
    each test's final record once the run is checked to have failed on the trigger alone."""
    env = {"SIMPLER_CUDA_DRIVER": driver, "FAKE_CUDA_RESET_HEALS": "1" if reset_heals else "0"}
    run = _scene(simpler_run, "0-1", env)
    return run, _assert_one_real_failure(run)


def _final(run: Any) -> dict[str, dict[str, Any]]:
    final: dict[str, dict[str, Any]] = {}
    for record in sorted(run.records("test"), key=lambda r: PHASE_RANK[r["phase"]]):
        final[record["nodeid"]] = record
    return final


def _assert_one_real_failure(run: Any) -> dict[str, dict[str, Any]]:
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-2000:]
    final = _final(run)
    failed = {nodeid for nodeid, r in final.items() if r["outcome"] not in ("passed", "recovered")}
    skipped = {nodeid for nodeid, r in final.items() if r["outcome"] == "skipped"}
    assert failed - skipped == {TRIGGER}
    assert skipped and all(nodeid.startswith(SPIN_TESTS) for nodeid in skipped)
    trigger = [r for r in run.records("test", nodeid=TRIGGER)]
    assert {(r["rc"], r["where"]) for r in trigger} == {(700, "cuStreamQuery")}
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in trigger[0]["message"]
    assert " 1 failed" in run.stdout.splitlines()[-1] and TRIGGER in run.stdout
    return final


def test_a_reset_that_heals_rebuilds_the_worker_and_the_rest_pass(
    simpler_run: Any, fake_cuda_driver: str
) -> None:
    run, final = _fake_scene(simpler_run, fake_cuda_driver, reset_heals=True)
    assert not [r for r in final.values() if r["outcome"] == "recovered"]  # healed in place
    healed = run.records("lifecycle", nodeid=TRIGGER, phase="l2")
    assert [r["dest"] for r in healed] == ["poisoned", "force_reset", "rebuilt"]


def test_a_reset_that_does_not_heal_sends_the_victims_to_a_fresh_process(
    simpler_run: Any, fake_cuda_driver: str
) -> None:
    _, final = _fake_scene(simpler_run, fake_cuda_driver, reset_heals=False)
    recovered = [r for r in final.values() if r["outcome"] == "recovered"]
    # Every test queued behind the fault on that card, the other runtime's included (its
    # worker shares the device's primary context): re-run fresh, none a cascade failure.
    assert recovered and not [r for r in final.values() if r["outcome"] == "flaky"]
    runtimes = {r["runtime"] for r in recovered}
    assert runtimes == {"tensormap_and_ringbuffer", "host_build_graph"}, runtimes


# Asked of a fresh process: this one may hold the fake driver, under the real one's name.
PROBE = "from simpler.runner.cuda_driver import driver_problem; print(driver_problem() or '')"
# The start of driver_problem()'s one line when the driver cannot be loaded.
NO_DRIVER = "platform cuda needs the NVIDIA driver: "


def _ask_for_the_driver(driver: str | None = None) -> subprocess.CompletedProcess[str]:
    """The probe's answer; ``driver`` None asks for the real one, whatever an outer shell set."""
    env = {k: v for k, v in os.environ.items() if k != "SIMPLER_CUDA_DRIVER"}
    if driver is not None:
        env["SIMPLER_CUDA_DRIVER"] = driver
    return subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=60
    )


def _verdict(asked: subprocess.CompletedProcess[str]) -> tuple[str, str]:
    """("run", ""), ("skip", the no-driver line), or ("fail", why).

    Only the one-line no-driver answer skips: a probe that crashed, or said anything else,
    means the driver lookup itself is broken, and on a GPU machine that must not pass as a
    skip.
    """
    lines = asked.stdout.splitlines()
    if asked.returncode == 0 and not asked.stdout.strip():
        return "run", ""
    if asked.returncode == 0 and len(lines) == 1 and lines[0].startswith(NO_DRIVER):
        return "skip", lines[0]
    return "fail", (
        f"the driver probe answered neither 'loaded' nor the no-driver line "
        f"(exit {asked.returncode}):\n{asked.stdout[-2000:]}{asked.stderr[-3000:]}"
    )


def test_the_scene_on_a_real_gpu(simpler_run: Any) -> None:
    action, text = _verdict(_ask_for_the_driver())
    if action == "fail":
        pytest.fail(text)
    if action == "skip":
        pytest.skip(text)
    env = {"SIMPLER_CUDA_DRIVER": ""}  # the real one, whatever an outer shell set
    _assert_one_real_failure(_scene(simpler_run, "0", env))


def test_a_driver_that_loads_runs_the_real_gpu_scene(fake_cuda_driver: str) -> None:
    assert _verdict(_ask_for_the_driver(fake_cuda_driver)) == ("run", "")


def test_only_the_no_driver_line_skips_the_real_gpu_scene() -> None:
    missing = _ask_for_the_driver("/nonexistent/libcuda.so.1")
    assert _verdict(missing) == ("skip", missing.stdout.strip())
    # A probe that crashes (here: its import fails) is a failure, its traceback the reason.
    crashed = subprocess.run(
        [sys.executable, "-c", PROBE.replace("driver_problem;", "no_such_name;")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    action, text = _verdict(crashed)
    assert crashed.returncode != 0 and action == "fail"
    assert "Traceback" in text and "no_such_name" in text


@pytest.mark.parametrize(
    ("returncode", "stdout"),
    [
        (-11, ""),  # killed by a signal, nothing said
        (1, NO_DRIVER + "x cannot be loaded\n"),  # the right line, but then it failed
        (0, "something else\n"),
        (0, NO_DRIVER + "x cannot be loaded\nand more\n"),
    ],
)
def test_any_other_probe_answer_fails_the_real_gpu_scene(returncode: int, stdout: str) -> None:
    asked = subprocess.CompletedProcess(["probe"], returncode, stdout, "")
    assert _verdict(asked)[0] == "fail"


def test_plain_pytest_on_cuda_without_a_driver_stops_with_one_line() -> None:
    # Not one error per test: the first test that asks for a worker ends the session.
    scenario = "tests/it/scenarios/scenario_golden.py"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", scenario, "-q", "--simpler-platform", "cuda"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "SIMPLER_CUDA_DRIVER": "/nonexistent/libcuda.so.1"},
    )
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout[-2000:]
    line = "simpler: platform cuda needs the NVIDIA driver: /nonexistent/libcuda.so.1"
    assert done.stdout.count(line) == 1 and "Traceback" not in done.stdout + done.stderr
