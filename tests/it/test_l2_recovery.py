"""Through ``simpler run``, on both sims: one device fault never takes down the tests after it."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from processes import ROOT, python_m, sim_faults, simpler_env
from trigger_victims import HANG

from simpler.processes.locks import DeviceLocks
from simpler.reporting import report_file

HANG_SUITE = HANG.path
GOLDEN_SUITE = "tests/it/scenarios/scenario_golden.py"
VICTIMS = HANG.victims
TRIGGER = HANG.trigger
L2 = ("--phases", "l2")


def _l2(simpler_run: Any, platform: str, *pytest_args: str) -> Any:
    return simpler_run.suite(*pytest_args, platform=platform, device="0", options=L2)


def _all_phases(simpler_run: Any, platform: str, *pytest_args: str) -> Any:
    return simpler_run.suite(*pytest_args, platform=platform, device="0")


def _lifecycle_path(run: Any) -> list[tuple[str, str]]:
    return [(r["source"], r["dest"]) for r in run.records("lifecycle")]


def test_hang_then_five_victims_no_cascade_in_ten_runs(simpler_run: Any, platform: str) -> None:
    cascades = 0
    for _ in range(10):
        run = _l2(simpler_run, platform, HANG_SUITE, *sim_faults("hang@TestTrigger"))
        outcomes = run.outcomes("l2")
        assert outcomes[TRIGGER] == "failed"
        cascades += any(outcomes[v] != "passed" for v in VICTIMS)
        path = _lifecycle_path(run)
        for step in [
            ("healthy", "poisoned"),
            ("poisoned", "force_reset"),
            ("force_reset", "rebuilt"),
        ]:
            assert step in path
    assert cascades == 0


def test_force_reset_failing_poison_skips_the_victims_and_the_retry_recovers_them(
    simpler_run: Any, platform: str
) -> None:
    run = _all_phases(
        simpler_run, platform, HANG_SUITE, *sim_faults("hang@TestTrigger#1", "force_reset_fail")
    )
    l2 = run.outcomes("l2")
    assert all(l2[v] == "poison_skipped" for v in VICTIMS)
    registered = {r["nodeid"] for r in run.records("poison_skip")}
    assert registered == set(VICTIMS)
    retry = run.outcomes("retry")
    assert all(retry[v] == "recovered" for v in VICTIMS)
    assert retry[TRIGGER] == "flaky"
    assert "Recovered (re-run in a fresh process): 5" in run.stdout
    assert run.returncode == 0, run.stdout[-3000:]


def test_drain_false_negative_on_a2a3_still_heals_the_worker(simpler_run: Any) -> None:
    run = _l2(
        simpler_run, "a2a3sim", HANG_SUITE, *sim_faults("hang@TestTrigger", "drain_false_negative")
    )
    outcomes = run.outcomes("l2")
    assert [outcomes[v] for v in VICTIMS] == ["passed"] * 5
    assert ("force_reset", "rebuilt") in _lifecycle_path(run)


def test_a_golden_mismatch_is_a_failure_and_poisons_nothing(
    simpler_run: Any, platform: str
) -> None:
    run = _all_phases(simpler_run, platform, GOLDEN_SUITE)
    outcomes = run.outcomes("l2")
    assert outcomes[f"{GOLDEN_SUITE}::TestWrongGolden::test_add_against_a_wrong_golden"] == "failed"
    assert outcomes[f"{GOLDEN_SUITE}::TestAfterMismatch::test_noop"] == "passed"
    assert not run.records("lifecycle", trigger="device_error")
    assert not run.records("test", phase="retry")
    assert run.returncode == 1
    assert "GoldenMismatch: vector_add: got [2.0, 2.0, 2.0], golden [5.0, 5.0, 5.0]" in run.stdout


def test_a_fault_on_attempt_one_only_is_flaky_and_green(simpler_run: Any, platform: str) -> None:
    args = (HANG_SUITE, *sim_faults("hang@TestTrigger#1"))
    run = _all_phases(simpler_run, platform, *args)
    assert run.outcomes("retry") == {TRIGGER: "flaky"}
    assert [r["attempt"] for r in run.records("test", nodeid=TRIGGER)] == [1, 2]
    assert run.returncode == 0
    strict = simpler_run.suite(*args, platform=platform, device="0", options=("--fail-on-flaky",))
    assert strict.returncode == 1


def test_a_fault_on_every_attempt_is_a_consistent_failure(simpler_run: Any, platform: str) -> None:
    run = _all_phases(simpler_run, platform, HANG_SUITE, *sim_faults("hang@TestTrigger"))
    assert [r["attempt"] for r in run.records("test", nodeid=TRIGGER)] == [1, 2, 3]
    assert run.outcomes("retry") == {TRIGGER: "failed"}
    assert run.returncode == 1
    assert TRIGGER in run.stdout and "rc=" in run.stdout


def test_without_recovery_the_cascade_appears(simpler_run: Any, platform: str) -> None:
    run = simpler_run.suite(
        HANG_SUITE,
        *sim_faults("hang@TestTrigger"),
        platform=platform,
        device="0",
        options=(*L2, "--no-recovery"),
    )
    outcomes = run.outcomes("l2")
    assert [outcomes[v] for v in VICTIMS] == ["failed"] * 5
    unusable = run.records("test", nodeid=VICTIMS[0])[0]
    assert unusable["rc"] == -1 and "unusable" in unusable["message"]


def test_each_xdist_worker_uses_its_own_device(simpler_run: Any) -> None:
    run = simpler_run.suite(HANG_SUITE, GOLDEN_SUITE, device="2,5", options=L2)
    workers = {r["worker"] for r in run.records("test")}
    assert workers, run.stdout
    for key in workers:
        _, _, device, xdist_id = key.split("/")
        assert xdist_id in ("gw0", "gw1")
        assert device == {"gw0": "dev2", "gw1": "dev5"}[xdist_id]


def test_output_is_one_line_per_class(simpler_run: Any) -> None:
    run = _l2(simpler_run, "a5sim", HANG_SUITE)
    for i in range(1, 6):
        assert f"PASS  {HANG_SUITE}::TestVictim{i}  (1 passed" in run.stdout
    assert "....." not in run.stdout


WAITING = "simpler: waiting for device(s) [0]: held by another run"


def test_a_second_run_waits_for_the_devices_another_run_holds(tmp_path: Path) -> None:
    other_run = DeviceLocks(tmp_path / "locks")
    assert other_run.try_acquire([0])
    report = tmp_path / "report.jsonl"
    told = threading.Event()
    run_args = ("run", "--report", str(report), "--platform", "a5sim", "--device", "0", *L2)
    with subprocess.Popen(
        python_m("simpler", *run_args, "--", GOLDEN_SUITE),
        cwd=ROOT,
        env=simpler_env({"SIMPLER_LOCK_DIR": str(tmp_path / "locks")}),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as second_run:

        def watch_stderr() -> None:
            assert second_run.stderr is not None
            for line in second_run.stderr:
                if line.rstrip("\n") == WAITING:
                    told.set()

        watcher = threading.Thread(target=watch_stderr, daemon=True)
        watcher.start()
        try:
            told.wait(120)  # the limit only guards against a run that never says it waits
            released_at = time.time()  # the clock the report stamps its records with
            other_run.release_all()
            returncode = second_run.wait(300)
        finally:
            second_run.kill()
            other_run.release_all()
        watcher.join(60)
    assert told.is_set(), "the second run never said it waits for device 0"
    assert returncode == 1  # scenario_golden fails one test on purpose: the run did run
    # A lock file names its last holder: the second run took the device once we let it go,
    holder = (tmp_path / "locks" / "device-0.lock").read_text()
    assert holder == f"{second_run.pid}\n"
    # and ran nothing on it before.
    tests = [r for r in report_file.read(report) if r["type"] == "test"]
    assert tests and min(r["ts"] for r in tests) > released_at
