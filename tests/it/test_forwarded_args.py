"""The user's pytest args reach every kind of process simpler starts, each as it can take them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from processes import sim_faults
from trigger_victims import FORWARDED

SUITE = "tests/it/scenarios/forwarded"
TRIGGER, VICTIMS = FORWARDED.trigger, FORWARDED.victims
DESELECTED = f"{FORWARDED.path}::TestDeselected::test_never_runs"
RESOURCE = f"{SUITE}/scenario_devices.py::test_on_its_own_device"


def test_deselect_ignore_and_n_reach_l2_resource_and_retry(simpler_run: Any) -> None:
    """L2 under -n 2, a Resource child, and retry processes for a poison-skip: all green."""
    run = simpler_run.suite(
        SUITE,
        *("-o", "python_files=scenario_*.py", "--deselect", DESELECTED),
        *("--ignore", f"{SUITE}/ignored", "-n", "2", "--dist", "loadfile"),
        *sim_faults("hang@TestTrigger#1", "force_reset_fail"),
    )
    tail = run.stdout[-3000:] + run.stderr[-2000:]
    assert run.returncode == 0, tail
    l2 = run.outcomes("l2")
    assert {l2[v] for v in VICTIMS} == {"poison_skipped"}, tail
    assert all(r["worker"].endswith(("gw0", "gw1")) for r in run.records("test", phase="l2"))
    assert run.outcomes("resource") == {RESOURCE: "passed"}
    assert run.outcomes("retry") == {**dict.fromkeys(VICTIMS, "recovered"), TRIGGER: "flaky"}
    ran = {r["nodeid"] for r in run.records("test")} | {r["nodeid"] for r in run.records("child")}
    assert DESELECTED not in ran
    assert not [n for n in ran if "/ignored/" in n]


def test_node_ids_stay_the_project_s_own_without_an_ini_file(
    simpler_run: Any, tmp_path: Path
) -> None:
    """No ini file: pytest picks the rootdir from the paths on the command line; the report
    file's path (outside the project here) must not move it, or node ids change mid-run."""
    project = tmp_path / "deep" / "project"
    project.mkdir(parents=True)
    (project / "test_plain.py").write_text(
        "def test_one(worker):\n    worker.run('noop')\n\n"
        "def test_two(worker):\n    worker.run('noop')\n"
    )
    run = simpler_run.suite(".", "-p", "no:cacheprovider", device="0", cwd=project)
    assert run.returncode == 0, run.stdout[-2000:]
    assert {r["nodeid"] for r in run.records("test")} == {
        "test_plain.py::test_one",
        "test_plain.py::test_two",
    }
