"""The Resource phase through ``simpler run``: failing children are named at the end of the log."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import junitparser
import psutil
import trigger_victims
from processes import sim_faults

from simpler.reporting import report_file

SUITE = "tests/it/scenarios/scenario_resource.py"
CRASH = f"{SUITE}::test_crashes_with_sigsegv"
HANG = f"{SUITE}::test_hangs_past_its_timeout"
FAILS = f"{SUITE}::test_fails_an_assertion"
PASSES = f"{SUITE}::test_passes_on_its_device"


def _resource(simpler_run: Any, *options: str, env: dict[str, str] | None = None) -> Any:
    phases = ("--phases", "resource,retry,report")
    return simpler_run.suite(SUITE, options=(*phases, *options), env=env)


def test_failed_children_are_named_with_signal_crash_and_timeout(
    simpler_run: Any, tmp_path: Path
) -> None:
    junit = tmp_path / "junit.xml"
    run = _resource(simpler_run, "--junit", str(junit), "--tail-lines", "20")
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
    run = _resource(simpler_run, env=env)
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
    run = simpler_run.suite(SUITE, device="0")
    assert run.returncode == 2
    assert f"{CRASH} needs 2" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert not run.report.exists()


def test_sigterm_to_the_orchestrator_stops_children_and_reports_what_finished(
    simpler_run: Any, tmp_path: Path
) -> None:
    notes = tmp_path / "pids"  # the scenario notes the detached process its hanging test started

    def a_child_started(report: Path) -> bool:
        # The orchestrator is appending meanwhile: the project's reader skips a torn last line.
        records = report_file.read(report) if report.exists() else []
        return any(r.get("type") == "child" for r in records) and notes.exists()

    run, descendants = simpler_run.interrupt(
        *("run", "--platform", "a5sim", "--device", "0-1", "--phases", "resource,report"),
        *("--", "tests/it/scenarios/scenario_leftover.py"),
        *("-k", "passes_quickly or detached_process_then_hangs"),
        when=a_child_started,
        signum=signal.SIGTERM,
        env={"SIMPLER_IT_PIDS": str(notes)},
    )
    assert run.returncode == 143, run.stderr  # 128 + SIGTERM, after the partial summary
    assert "interrupted by SIGTERM" in run.stderr
    assert "simpler summary" in run.stdout and "test_passes_quickly" in run.report.read_text()
    ends = run.records("phase", event="end")
    assert [(r["phase"], r["interrupted"]) for r in ends] == [
        ("resource", "SIGTERM"),
        ("report", None),
    ]
    detached = int(notes.read_text().split()[1])  # a new session: no group signal reaches it
    alive = [p for p in descendants if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert detached in {p.pid for p in descendants} and not alive


def test_a_device_whose_worker_could_not_be_reset_is_quarantined(simpler_run: Any) -> None:
    faults = sim_faults("hang@TestTrigger#1", "force_reset_fail")
    run = simpler_run.suite(trigger_victims.HANG.path, PASSES, *faults)
    gave_up = {r["device"] for r in run.records("lifecycle", trigger="give_up")}
    assert len(gave_up) == 1
    (retired,) = run.records("device_retired")
    assert set(retired["devices"]) == gave_up
    (child,) = run.records("child")
    assert not set(child["devices"]) & gave_up
    assert f"*** Retired device(s) {gave_up.pop()} for the rest of the run" in run.stdout
    assert run.returncode == 0, run.stdout[-2000:]
