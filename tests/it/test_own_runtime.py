"""Through ``simpler run``: a project's own runtime, plugged in by its conftest hooks."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

SCENARIO = Path(__file__).resolve().parent / "scenarios" / "own_runtime"
TRIGGER = "test_myhw.py::TestTrigger::test_launch"
VICTIMS = [f"test_myhw.py::TestVictim{i}::test_run" for i in (1, 2, 3)]


def _project(tmp_path: Path) -> Path:
    """A small project of its own: the hooks in its conftest.py, a suite that uses them."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(SCENARIO / "scenario_conftest.py", project / "conftest.py")
    shutil.copy(SCENARIO / "scenario_own_runtime.py", project / "test_myhw.py")
    # Its own rootdir: without an ini file pytest would pick a common folder of the paths.
    (project / "pytest.ini").write_text("[pytest]\n")
    return project


def _run(simpler_run: Any, project: Path, **env: str) -> Any:
    return simpler_run(
        "run", "--platform", "myhw", "--device", "0", "--", ".", cwd=project, env=env
    )


def test_a_fault_heals_in_place_and_the_next_test_passes(simpler_run: Any, tmp_path: Path) -> None:
    run = _run(simpler_run, _project(tmp_path))
    l2 = run.outcomes("l2")
    assert l2[TRIGGER] == "failed"
    assert all(l2[v] == "passed" for v in VICTIMS), l2
    path = [(r["source"], r["dest"]) for r in run.records("lifecycle")]
    assert ("poisoned", "force_reset") in path and ("force_reset", "rebuilt") in path
    poisoned = run.records("lifecycle", dest="poisoned")
    assert [(r["rc"], r["where"]) for r in poisoned] == [(507899, "rtMalloc")]
    assert run.outcomes("retry")[TRIGGER] == "flaky"  # attempt 2 in a fresh process passes
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]


def test_a_reset_that_does_not_take_poison_skips_and_the_retry_recovers(
    simpler_run: Any, tmp_path: Path
) -> None:
    run = _run(simpler_run, _project(tmp_path), MYHW_RESET="broken", SIMPLER_RESET_ATTEMPTS="2")
    l2 = run.outcomes("l2")
    assert all(l2[v] == "poison_skipped" for v in VICTIMS), l2
    assert {r["nodeid"] for r in run.records("poison_skip")} == set(VICTIMS)
    retry = run.outcomes("retry")
    assert all(retry[v] == "recovered" for v in VICTIMS), retry
    assert retry[TRIGGER] == "flaky"
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]


def test_a_platform_nobody_provides_is_one_line_and_exit_2(
    simpler_run: Any, tmp_path: Path
) -> None:
    project = tmp_path / "plain"
    project.mkdir()
    (project / "test_plain.py").write_text("def test_it():\n    pass\n")
    (project / "pytest.ini").write_text("[pytest]\n")
    run = simpler_run("run", "--platform", "nobody", "--device", "0", "--", ".", cwd=project)
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert "unknown platform 'nobody'" in lines[0]
    assert "pytest_simpler_create_runner" in lines[0] and "SIMPLER_RUNNER_LIBRARY" in lines[0]
    assert not run.report.exists()


def test_a_runner_missing_methods_is_a_usage_error(simpler_run: Any, tmp_path: Path) -> None:
    project = tmp_path / "incomplete"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "conftest.py").write_text(
        "class Incomplete:\n"
        "    def init(self): ...\n"
        "def pytest_simpler_create_runner(platform, runtime, device):\n"
        "    return Incomplete()\n"
    )
    (project / "test_one.py").write_text("def test_it(worker):\n    pass\n")
    run = simpler_run("run", "--platform", "myhw", "--device", "0", "--", ".", cwd=project)
    assert run.returncode == 2, run.stdout[-2000:]
    said = [line for line in run.stdout.splitlines() if "pytest_simpler_create_runner" in line]
    assert len(said) == 1 and "without probe, force_reset, finalize, close, unusable" in said[0]
