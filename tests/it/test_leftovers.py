"""No process outlives ``simpler run``: leftovers are killed and named; a signal ends it cleanly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psutil

SUITE = "tests/it/scenarios/scenario_leftover.py"
DETACHED = f"{SUITE}::test_leaves_a_detached_process"


def _notes(path: Path) -> dict[str, int]:
    if not path.exists():
        return {}
    return {tag: int(pid) for tag, pid in (line.split() for line in path.read_text().splitlines())}


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_a_detached_process_a_resource_test_left_is_killed_and_named(
    simpler_run: Any, tmp_path: Path
) -> None:
    notes = tmp_path / "pids"
    run = simpler_run(
        *("run", "--platform", "a5sim", "--device", "0", "--phases", "resource,report"),
        *("--", SUITE, "-k", "test_leaves_a_detached_process and not hangs"),
        env={"SIMPLER_IT_PIDS": str(notes), "SIMPLER_LOCK_DIR": str(tmp_path / "locks")},
    )
    pid = _notes(notes)["detached"]
    assert _gone(pid)
    # A leftover is reported, not a failure: the test passed, so the run is green.
    assert run.returncode == 0, run.stdout[-3000:]
    assert f"*** 1 leftover process(es) killed: sleep ({pid}) ***" in run.stdout
    assert f"sleep ({pid}) was started during {DETACHED}: sleep 600" in run.stdout
    (record,) = run.records("leftover")
    assert record["when"] == "tests_over"
    assert record["processes"] == [
        {"pid": pid, "name": "sleep", "cmdline": "sleep 600", "test": DETACHED, "signal": "SIGTERM"}
    ]


def test_sigint_during_l2_stops_its_pytest_prints_the_partial_summary_and_exits_130(
    simpler_run: Any, tmp_path: Path
) -> None:
    notes = tmp_path / "pids"
    run, below = simpler_run.interrupt(
        *("run", "--platform", "a5sim", "--device", "0", "--phases", "l2,resource,report"),
        *("--", SUITE, "-k", "hangs_in_l2 or passes_quickly"),
        when=lambda _: "l2" in _notes(notes),
        env={"SIMPLER_IT_PIDS": str(notes)},
    )
    assert run.returncode == 130, run.stderr
    assert "interrupted by SIGINT" in run.stderr
    out = run.stdout
    assert "simpler summary" in out and out.rstrip().splitlines()[-1].startswith("simpler: ")
    assert _gone(_notes(notes)["l2"]) and below and all(_gone(p.pid) for p in below)
    phases = run.records("phase")
    assert [(r["phase"], r["event"]) for r in phases] == [
        ("l2", "start"),
        ("l2", "end"),
        ("resource", "start"),  # never started, but it says what it was to run
        ("resource", "end"),
        ("report", "start"),
        ("report", "end"),
    ]
    assert phases[1]["interrupted"] == "SIGINT"
    assert phases[3]["not_started"] == "interrupted by SIGINT"
