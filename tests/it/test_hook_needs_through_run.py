"""Through ``simpler run`` and ``simpler capacity``: a project whose conftest answers each test's
runtime (a class attribute) and device count (a ``CASES`` table) with no marker anywhere, and
whose worker has only ``init()`` and ``close()`` (``simpler.InitCloseRunner``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

SCENARIO = Path(__file__).resolve().parent / "scenarios" / "hook_needs"
SUITE = "test_needs.py"
ALPHA = [f"{SUITE}::TestAlpha::{name}" for name in ("test_runs_on_alpha", "test_after_the_fault")]
FAULT = f"{SUITE}::TestAlpha::test_fault"
BETA = [f"{SUITE}::TestBeta::{name}" for name in ("test_caught_fault", "test_runs_on_beta")]
CASES = {f"{SUITE}::TestSharded::test_case[single]": 1, f"{SUITE}::TestSharded::test_case[pair]": 2}


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(SCENARIO / "scenario_conftest.py", project / "conftest.py")
    shutil.copy(SCENARIO / "scenario_hook_needs.py", project / SUITE)
    (project / "pytest.ini").write_text("[pytest]\n")
    return project


def _run(simpler_run: Any, project: Path, **env: str) -> Any:
    argv = ("run", "--platform", "hookhw", "--device", "0-1", "--", ".")
    return simpler_run(*argv, cwd=project, env=env)


def test_hooks_pool_l2_tests_by_runtime_and_size_resource_tests(
    simpler_run: Any, tmp_path: Path
) -> None:
    project = _project(tmp_path)
    log = tmp_path / "workers.log"
    run = _run(simpler_run, project, HOOKHW_LOG=str(log))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    l2 = run.outcomes("l2")
    assert l2 == {**dict.fromkeys(ALPHA + BETA, "passed"), FAULT: "failed"}
    runtimes = {r["nodeid"]: r["runtime"] for r in run.records("test", phase="l2")}
    assert runtimes == {**dict.fromkeys([*ALPHA, FAULT], "alpha"), **dict.fromkeys(BETA, "beta")}
    # The fault healed in place (InitCloseRunner: close and reopen), and a fault the test
    # caught poisoned its worker all the same: the runner saw the device error go by.
    poisoned = {r["nodeid"]: r["rc"] for r in run.records("lifecycle", dest="poisoned")}
    assert poisoned == {FAULT: 507046, BETA[0]: None}
    assert len(run.records("lifecycle", dest="rebuilt")) == 2
    assert run.outcomes("retry") == {FAULT: "flaky"}
    # The Resource phase: a child each, on as many devices as the conftest's CASES say.
    assert run.outcomes("resource") == dict.fromkeys(CASES, "passed")
    children = {r["label"]: len(r["devices"]) for r in run.records("child", phase="resource")}
    assert children == CASES
    # Every worker the project opened was closed exactly once, in every process.
    events = Counter(tuple(line.split()[:3]) for line in log.read_text().splitlines())
    opened = {key[:2] for key in events if key[2] == "init"}
    assert opened and {key[:2] for key in events if key[2] == "close"} == opened
    assert set(events.values()) == {1}, events


def test_capacity_collect_sizes_the_tests_through_the_hook(tmp_path: Path) -> None:
    project = _project(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "simpler", "capacity", "--collect", ".", "--format", "json"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    summary = json.loads(done.stdout)["device_count_summary"]
    # Five L2 tests and the single case on one device, the pair case on two.
    assert {size: summary[size]["enabled"] for size in ("1", "2")} == {"1": 6, "2": 1}


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ("count", f"{SUITE}::TestSharded::test_case[pair]: pytest_simpler_device_count returned 0"),
        ("runtime", f"{SUITE}::TestBeta::test_caught_fault: pytest_simpler_runtime returned 7"),
        ("raise", f"{SUITE}::TestSharded::test_case[pair]: pytest_simpler_device_count raised"),
    ],
)
def test_a_bad_hook_answer_is_one_line_exit_2_and_nothing_runs(
    simpler_run: Any, tmp_path: Path, bad: str, said: str
) -> None:
    project = _project(tmp_path)
    log = tmp_path / "workers.log"
    run = _run(simpler_run, project, HOOKHW_BAD=bad, HOOKHW_LOG=str(log))
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    assert not run.report.exists() and not log.exists()  # no run began, no worker opened
    capacity = subprocess.run(
        [sys.executable, "-m", "simpler", "capacity", "--collect", "."],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "HOOKHW_BAD": bad},
    )
    assert capacity.returncode == 2
    assert capacity.stderr.count("\n") == 1 and said in capacity.stderr, capacity.stderr
