"""Through ``simpler run``: an L2 xdist worker that dies never hangs the run or shares a device."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

SCENARIOS = "tests/it/scenarios"
CRASH = f"{SCENARIOS}/scenario_crash.py"
NEIGHBOURS = [f"{SCENARIOS}/scenario_crash_neighbours_{n}.py" for n in (1, 2)]
CRASH_LOOP = f"{SCENARIOS}/scenario_crash_loop.py"
CRASHED = f"{CRASH}::TestCrash::test_crash"
TIMEOUT_S = 120  # each run takes seconds; a hang must fail the test, not stall CI
# The neighbours hold the surviving worker until a replacement has started a test, through
# files in this folder (scenarios/crash_handoff.py; its hang guard is well under TIMEOUT_S).
HANDOFF_ENV = "SIMPLER_IT_CRASH_HANDOFF"


def _run(*pytest_args: str, phases: str | None = None) -> tuple[str, ...]:
    chosen = ("--phases", phases) if phases else ()
    return ("run", "--platform", "a5sim", "--device", "0-1", *chosen, "--", *pytest_args)


def _xdist_id(record: dict[str, Any]) -> str:
    return str(record["worker"]).rsplit("/", 1)[-1]  # a5sim/runtime/dev0/gw2 -> gw2


def _spans(run: Any) -> dict[str, tuple[int, float, float]]:
    """Each xdist worker of L2: its one device and the time from its first to its last test."""
    spans: dict[str, tuple[int, float, float]] = {}
    for record in run.records("test", phase="l2"):
        if record["worker"] is None:
            continue
        gw = _xdist_id(record)
        start, end = record["ts"] - record["duration_s"], record["ts"]
        device, first, last = spans.get(gw, (record["device"], start, end))
        assert device == record["device"], f"{gw} used devices {device} and {record['device']}"
        spans[gw] = (device, min(first, start), max(last, end))
    return spans


def _assert_no_device_shared(spans: dict[str, tuple[int, float, float]]) -> None:
    for (a, (dev_a, start_a, end_a)), (b, (dev_b, start_b, end_b)) in itertools.combinations(
        spans.items(), 2
    ):
        overlap = start_a < end_b and start_b < end_a
        assert not (dev_a == dev_b and overlap), f"{a} and {b} shared device {dev_a} while alive"


def test_a_crashed_worker_costs_only_its_test_and_the_retry_reruns_it(
    simpler_run: Any, tmp_path: Path
) -> None:
    handoff = tmp_path / "handoff"
    handoff.mkdir()
    env = {HANDOFF_ENV: str(handoff)}
    run = simpler_run(*_run(CRASH, *NEIGHBOURS), env=env, timeout=TIMEOUT_S)
    l2 = {r["nodeid"]: r for r in run.records("test", phase="l2")}
    crashed = l2[CRASHED]
    assert crashed["outcome"] == "failed"
    assert crashed["message"].startswith("worker gw")
    assert f"crashed while running {CRASHED}" in crashed["message"]
    assert crashed["poisoned"] is True
    # Every other test has its verdict, those queued behind the crash on the dead worker too.
    assert len(l2) == 14
    not_passed = {
        nodeid: (r["outcome"], r["message"])
        for nodeid, r in l2.items()
        if nodeid != CRASHED and r["outcome"] != "passed"
    }
    assert not not_passed, not_passed

    spans = _spans(run)
    _assert_no_device_shared(spans)
    dead = _xdist_id(crashed)
    replacements = set(spans) - {dead, "gw0", "gw1"}
    assert replacements, "the replacement worker ran no test: nothing to check its device on"
    for gw in replacements:  # it took the device of the worker that died, not another's
        assert spans[gw][0] == crashed["device"], (gw, spans)

    retry = run.records("test", phase="retry", nodeid=CRASHED)
    assert [(r["outcome"], r["attempt"]) for r in retry] == [("flaky", 2)]
    assert "crashed while running" in run.stdout
    assert run.returncode == 0, run.stdout[-3000:]


def test_a_crash_loop_ends_with_every_test_named(simpler_run: Any) -> None:
    run = simpler_run(*_run(CRASH_LOOP, NEIGHBOURS[0], phases="l2,report"), timeout=TIMEOUT_S)
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-3000:]
    l2 = {r["nodeid"]: r for r in run.records("test", phase="l2")}
    loop = [nodeid for nodeid in l2 if nodeid.startswith(CRASH_LOOP)]
    assert len(loop) == 7 and len(l2) == 11  # no test without a verdict
    crashes = [l2[n] for n in loop if "crashed while running" in l2[n]["message"]]
    not_run = [l2[n] for n in loop if l2[n]["message"].startswith("not run:")]
    # Two xdist workers: simpler caps xdist at 2 restarts each, so the 5th crash stops L2.
    assert len(crashes) == 5 and all(r["poisoned"] for r in crashes)
    assert len(not_run) == 2
    assert {r["message"] for r in not_run} == {
        "not run: the L2 session stopped after 5 worker crashes (--max-worker-restart 4)"
    }
    assert all(r["outcome"] == "failed" for r in [*crashes, *not_run])
    assert all(l2[n]["outcome"] == "passed" for n in l2 if n.startswith(NEIGHBOURS[0]))
    _assert_no_device_shared(_spans(run))
    assert "2 test(s) not run: the L2 session stopped after 5 worker crashes" in run.stdout
    assert "7 failed -> exit 1" in run.stdout
