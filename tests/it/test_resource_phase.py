"""The Resource phase through ``simpler run``: failing children are named at the end of the log."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import junitparser
import psutil

from simpler.reporting import report_file

ROOT = Path(__file__).resolve().parents[2]
SUITE = "tests/it/scenarios/scenario_resource.py"
CRASH = f"{SUITE}::test_crashes_with_sigsegv"
HANG = f"{SUITE}::test_hangs_past_its_timeout"
FAILS = f"{SUITE}::test_fails_an_assertion"
PASSES = f"{SUITE}::test_passes_on_its_device"


def _resource(*extra: str) -> tuple[str, ...]:
    return (
        "run",
        "--platform",
        "a5sim",
        "--device",
        "0-1",
        "--phases",
        "resource,retry,report",
        *extra,
        "--",
        SUITE,
    )


def test_failed_children_are_named_with_signal_crash_and_timeout(
    simpler_run: Any, tmp_path: Path
) -> None:
    junit = tmp_path / "junit.xml"
    run = simpler_run(*_resource("--junit", str(junit), "--tail-lines", "20"))
    assert run.returncode == 1
    children = {r["label"]: r for r in run.records("child")}
    assert children[CRASH]["signal"] == "SIGSEGV" and not children[CRASH]["reached_summary"]
    assert children[HANG]["timed_out"]
    assert children[FAILS]["returncode"] == 1 and children[FAILS]["reached_summary"]
    assert children[PASSES]["returncode"] == 0
    assert children[CRASH]["devices"] == [0, 1]
    out = run.stdout
    block = out[out.index("*** Resource phase failed: 3 child job(s) ***") :]
    assert "killed by SIGSEGV, crashed before pytest's summary line" in block
    assert "timed out after" in block
    assert "most recent call first" in Path(children[HANG]["log"]).read_text()
    assert out.rstrip().splitlines()[-1].startswith("simpler: ")
    suite = {case.name: case for s in junitparser.JUnitXml.fromfile(str(junit)) for case in s}
    assert any(r.__class__.__name__ == "Failure" for r in suite["test_fails_an_assertion"].result)


def test_under_github_actions_output_is_grouped_fenced_and_annotated(
    simpler_run: Any, tmp_path: Path
) -> None:
    step_summary = tmp_path / "step-summary.md"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(step_summary)}
    run = simpler_run(*_resource(), env=env)
    out = run.stdout
    assert (
        f"::group::{FAILS} [FAIL rc=1 devices=0" in out
        or f"::group::{FAILS} [FAIL rc=1 devices=1" in out
    )
    # The child's own "::error::" line sits inside a stop-commands fence.
    lines = out.splitlines()
    pwned = [
        i
        for i, line in enumerate(lines)
        if line == "::error::this line must not become a workflow command"
    ]
    assert pwned
    for index in pwned:
        opened = [i for i, line in enumerate(lines[:index]) if line.startswith("::stop-commands::")]
        token = lines[opened[-1]].split("::")[2]
        closed = [i for i, line in enumerate(lines) if line == f"::{token}::"]
        assert closed and closed[0] > index
    annotations = [
        line for line in lines if line.startswith("::error title=Resource phase failed::")
    ]
    assert len(annotations) == 3
    assert "| " in step_summary.read_text()


def test_a_resource_test_larger_than_the_pool_is_a_usage_error_before_anything_runs(
    simpler_run: Any,
) -> None:
    run = simpler_run("run", "--platform", "a5sim", "--device", "0", "--", SUITE)
    assert run.returncode == 2
    assert f"{CRASH} needs 2" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert not run.report.exists()


def test_sigterm_to_the_orchestrator_stops_children_and_reports_what_finished(
    tmp_path: Path,
) -> None:
    report = tmp_path / "report.jsonl"
    notes = tmp_path / "pids"  # the scenario notes the detached process its hanging test started
    argv = [
        sys.executable,
        "-m",
        "simpler",
        "run",
        "--platform",
        "a5sim",
        "--device",
        "0-1",
        "--phases",
        "resource,report",
        "--report",
        str(report),
        "--",
        "tests/it/scenarios/scenario_leftover.py",
        "-k",
        "passes_quickly or detached_process_then_hangs",
    ]
    orchestrator = subprocess.Popen(
        argv,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={
            **os.environ,
            "SIMPLER_IT_PIDS": str(notes),
            "SIMPLER_LOCK_DIR": str(tmp_path / "locks"),  # no other run delays the signal
        },
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            # The orchestrator is appending meanwhile: the project's reader skips a torn last line.
            records = report_file.read(report) if report.exists() else []
            if any(r.get("type") == "child" for r in records) and notes.exists():
                break
            time.sleep(0.2)
        descendants = psutil.Process(orchestrator.pid).children(recursive=True)
        orchestrator.send_signal(signal.SIGTERM)
        out, err = orchestrator.communicate(timeout=60)
    finally:
        orchestrator.kill()
    assert orchestrator.returncode == 143, err  # 128 + SIGTERM, after the partial summary
    assert "interrupted by SIGTERM" in err
    assert "simpler summary" in out and "test_passes_quickly" in report.read_text()
    ends = [r for r in report_file.read(report) if r["type"] == "phase" and r["event"] == "end"]
    assert [(r["phase"], r["interrupted"]) for r in ends] == [
        ("resource", "SIGTERM"),
        ("report", None),
    ]
    detached = int(notes.read_text().split()[1])  # a new session: no group signal reaches it
    alive = [p for p in descendants if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert detached in {p.pid for p in descendants} and not alive


def test_a_device_whose_worker_could_not_be_reset_is_quarantined(simpler_run: Any) -> None:
    hang_suite = "tests/it/scenarios/scenario_hang_victims.py"
    run = simpler_run(
        "run",
        "--platform",
        "a5sim",
        "--device",
        "0-1",
        "--",
        hang_suite,
        PASSES,
        "--simpler-sim-fault",
        "hang@TestTrigger#1",
        "--simpler-sim-fault",
        "force_reset_fail",
    )
    gave_up = {r["device"] for r in run.records("lifecycle", trigger="give_up")}
    assert len(gave_up) == 1
    (retired,) = run.records("device_retired")
    assert set(retired["devices"]) == gave_up
    (child,) = run.records("child")
    assert not set(child["devices"]) & gave_up
    assert f"*** Retired device(s) {gave_up.pop()} for the rest of the run" in run.stdout
    assert run.returncode == 0, run.stdout[-2000:]
