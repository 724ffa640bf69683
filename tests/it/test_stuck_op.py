"""Through ``simpler run``: an op that cannot be stopped in process ends its process, not the run.

In an xdist worker the plugin ends the process after the test; the controller names why, a
replacement worker runs the tests queued behind it, and the retry re-runs the trigger fresh.
In one pytest process the later tests are poison-skipped and re-run in fresh processes.
"""

from __future__ import annotations

from typing import Any

from processes import sim_faults
from trigger_victims import STUCK

TRIGGER, VICTIMS = STUCK.trigger, STUCK.victims
TIMEOUT_S = 120  # each run takes seconds; a process that waits on a stuck card must fail
A5_OP_TIMEOUT = (507046, "aclrtSynchronizeStreamWithTimeout")


def _run(simpler_run: Any, *pytest_args: str, env: dict[str, str] | None = None) -> Any:
    suite = (STUCK.path, *sim_faults("stuck@TestTrigger#1"), *pytest_args)
    return simpler_run.suite(*suite, env=env, timeout=TIMEOUT_S)


def _l2(run: Any) -> dict[str, dict[str, Any]]:
    return {r["nodeid"]: r for r in run.records("test", phase="l2")}


def _ended(run: Any) -> list[dict[str, Any]]:
    return [r for r in run.records("lifecycle") if r["trigger"] == "process_must_end"]


def _retried_trigger(run: Any) -> list[tuple[str, int]]:
    return [
        (r["outcome"], r["attempt"]) for r in run.records("test", phase="retry", nodeid=TRIGGER)
    ]


def test_the_xdist_worker_ends_and_its_queue_runs_on_a_replacement(simpler_run: Any) -> None:
    run = _run(simpler_run)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    l2 = _l2(run)
    trigger = l2[TRIGGER]
    assert (trigger["outcome"], trigger["poisoned"]) == ("failed", True)
    assert (trigger["rc"], trigger["where"]) == A5_OP_TIMEOUT
    assert trigger["message"].startswith(f"rc {A5_OP_TIMEOUT[0]} at {A5_OP_TIMEOUT[1]}: ")
    assert "cannot be stopped in process" in trigger["message"]
    assert "ended its process" in trigger["message"]
    # The tests queued behind it got real verdicts, from another xdist worker on its device.
    dead = trigger["worker"]
    assert all(l2[v]["outcome"] == "passed" for v in VICTIMS), l2
    assert all(l2[v]["worker"] != dead and l2[v]["device"] == trigger["device"] for v in VICTIMS)
    assert [r["worker"] for r in _ended(run)] == [dead]  # no reset tried: no force_reset record
    assert not [r for r in run.records("lifecycle", worker=dead) if r["dest"] == "force_reset"]
    assert _retried_trigger(run) == [("flaky", 2)]


def test_a_trigger_that_caught_the_error_still_ends_its_process(simpler_run: Any) -> None:
    run = _run(simpler_run, env={"SCENARIO_STUCK_CAUGHT": "1"})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    l2 = _l2(run)
    trigger = l2[TRIGGER]
    # The test passed, but its card is stuck: the crash record says why the worker ended.
    assert (trigger["outcome"], trigger["poisoned"]) == ("failed", True)
    assert "the test caught the device error" in trigger["message"]
    assert "ended its process" in trigger["message"]
    assert all(l2[v]["outcome"] == "passed" for v in VICTIMS), l2
    assert _retried_trigger(run) == [("flaky", 2)]


def test_in_one_process_the_later_tests_are_poison_skipped_and_retried(simpler_run: Any) -> None:
    run = _run(simpler_run, "-p", "no:xdist")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    l2 = _l2(run)
    assert (l2[TRIGGER]["outcome"], l2[TRIGGER]["poisoned"]) == ("failed", True)
    assert (l2[TRIGGER]["rc"], l2[TRIGGER]["where"]) == A5_OP_TIMEOUT
    for victim in VICTIMS:
        assert l2[victim]["outcome"] == "poison_skipped"
        assert "nothing in the process can stop it" in l2[victim]["message"]
        assert "a fresh process will re-run" in l2[victim]["message"]
    assert {r["nodeid"] for r in run.records("poison_skip")} == set(VICTIMS)
    assert len(_ended(run)) == 1
    assert run.outcomes("retry") == {TRIGGER: "flaky", **dict.fromkeys(VICTIMS, "recovered")}
    assert "3 recovered, 1 flaky, 0 failed -> exit 0" in run.stdout
