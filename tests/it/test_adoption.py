"""Through ``simpler run``: the example project of tests/example_project, adopted as a team
would adopt simpler.

It is a dispatcher-style project of its own: ``--platform``/``--device``/``--runtime`` options,
its worker class and error type, a ``scene_test`` decorator that sets the ``runtime`` and
``device_count`` markers, two runtimes that cannot share a device context. Its conftest plugs
the worker in through simpler's two hooks; its pytest.ini sets
``simpler_one_runtime_per_device``. Faults come from its own variables (``CHIPSIM_...``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

EXAMPLE = Path(__file__).resolve().parents[1] / "example_project"
VECTOR_ADD = "tests/test_vector_add.py::TestVectorAdd::test_run"
TRIGGER = f"{VECTOR_ADD}[Small]"  # the first run of vector_add in its process
SAME_CLASS = [f"{VECTOR_ADD}[Tiled]", f"{VECTOR_ADD}[Ragged]"]  # queued behind it
HARDWARE_ONLY = f"{VECTOR_ADD}[Huge]"  # its case table says a2a3 only
SHARDED_SUM = "tests/test_sharded_sum.py::TestShardedSum::test_run[TwoChips]"
TESTS = 10  # nine L2 tests (one of them hardware only) and one Resource test
DECODER = "tests/test_decoder_layer.py"  # host_build_graph, aicpu_build_graph, host_build_graph


def _project(tmp_path: Path) -> Path:
    """A copy, so that nothing a run writes lands in the repository."""
    project = tmp_path / "example_project"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    return project


def _run(simpler_run: Any, project: Path, devices: str = "0-1", **env: str) -> Any:
    faults = {"CHIPSIM_FAULT": "", "CHIPSIM_RESET": "", **env}
    return simpler_run(
        "run", "--platform", "chipsim", "--device", devices, "--", "tests/", cwd=project, env=faults
    )


def _last_line(run: Any) -> str:
    return run.stdout.strip().splitlines()[-1]


def _plain_pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest as the team ran it before simpler: nothing of simpler's in the environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIMPLER_", "CHIPSIM_"))}
    if "SIMPLER_LOCK_DIR" in os.environ:  # this suite's own locks (tests/conftest.py)
        env["SIMPLER_LOCK_DIR"] = os.environ["SIMPLER_LOCK_DIR"]
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    return subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=120)


def test_plain_pytest_in_the_project_passes_and_writes_nothing(tmp_path: Path) -> None:
    project = _project(tmp_path)
    before = sorted(p for p in project.rglob("*") if "__pycache__" not in p.parts)
    done = _plain_pytest(project)
    # One device by default: the two-chip case skips itself, every other case runs.
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1].startswith("8 passed, 2 skipped")
    said = done.stdout.splitlines() + done.stderr.splitlines()
    assert not [line for line in said if line.startswith("simpler")]  # inactive: it said nothing
    after = sorted(p for p in project.rglob("*") if "__pycache__" not in p.parts)
    assert after == before


def test_without_the_setting_the_two_runtimes_collide_on_one_device(tmp_path: Path) -> None:
    """What ``simpler_one_runtime_per_device`` prevents: the second runtime's init is refused,
    its worker heals by resetting the device, and that reset takes the first runtime's context."""
    project = _project(tmp_path)
    done = _plain_pytest(project, DECODER, "-o", "simpler_one_runtime_per_device=false")
    assert done.returncode == 1, done.stdout[-3000:]
    assert "FAILED tests/test_decoder_layer.py::TestGate" in done.stdout
    assert "ChipError: run failed with code 507899" in done.stdout


def test_a_device_fault_heals_in_place(simpler_run: Any, tmp_path: Path) -> None:
    run = _run(simpler_run, _project(tmp_path), CHIPSIM_FAULT="vector_add")
    l2 = run.outcomes("l2")
    assert l2[TRIGGER] == "failed"
    assert l2[HARDWARE_ONLY] == "skipped"
    others = {
        nodeid: outcome for nodeid, outcome in l2.items() if nodeid not in (TRIGGER, HARDWARE_ONLY)
    }
    assert set(SAME_CLASS) <= set(others) and set(others.values()) == {"passed"}, l2
    # The trigger's worker: poisoned with what the project's ChipError carried, then healed.
    poisoned = run.records("lifecycle", dest="poisoned")
    assert [(r["rc"], r["where"], r["nodeid"]) for r in poisoned] == [(507899, "run", TRIGGER)]
    path = [
        (r["source"], r["dest"]) for r in run.records("lifecycle", worker=poisoned[0]["worker"])
    ]
    assert path[path.index(("healthy", "poisoned")) :][:3] == [
        ("healthy", "poisoned"),
        ("poisoned", "force_reset"),
        ("force_reset", "rebuilt"),
    ]
    assert run.records("poison_skip") == []
    assert run.outcomes("retry") == {TRIGGER: "flaky"}  # attempt 2, a fresh process: no fault
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert (
        _last_line(run) == "simpler: 8 passed, 0 recovered, 1 flaky, 0 failed, 1 skipped -> exit 0"
    )


def test_a_reset_that_does_not_take_is_retried_in_a_fresh_process(
    simpler_run: Any, tmp_path: Path
) -> None:
    # Three devices: the card that cannot be reset is quarantined, and the two-chip
    # Resource test still needs two.
    run = _run(
        simpler_run,
        _project(tmp_path),
        devices="0-2",
        CHIPSIM_FAULT="vector_add",
        CHIPSIM_RESET="broken",
        SIMPLER_RESET_ATTEMPTS="2",
    )
    l2 = run.outcomes("l2")
    assert l2[TRIGGER] == "failed"
    victims = {r["nodeid"] for r in run.records("poison_skip")}
    assert set(SAME_CLASS) <= victims and all(l2[v] == "poison_skipped" for v in victims), l2
    # The reset failed with what the project's ChipError carried; the worker gave up (so did
    # any other runtime's worker that then tried that card) and the card was quarantined.
    gave_up = run.records("lifecycle", dest="skipped")
    assert {(r["rc"], r["where"], r["device"]) for r in gave_up} == {
        (507033, "device_reset", gave_up[0]["device"])
    }
    assert [r["devices"] for r in run.records("quarantine")] == [[gave_up[0]["device"]]]
    retry = run.outcomes("retry")
    assert {v: retry[v] for v in victims} == dict.fromkeys(victims, "recovered")
    assert retry[TRIGGER] == "flaky"
    assert run.outcomes("resource") == {SHARDED_SUM: "passed"}  # on the two cards left
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    passed = TESTS - 1 - len(victims) - 1  # all but the skipped case, the victims, the trigger
    assert _last_line(run) == (
        f"simpler: {passed} passed, {len(victims)} recovered, 1 flaky, 0 failed, 1 skipped"
        " -> exit 0"
    )


def test_runtimes_take_turns_on_a_device_and_the_resource_test_gets_two(
    simpler_run: Any, tmp_path: Path
) -> None:
    run = _run(simpler_run, _project(tmp_path))
    l2 = run.outcomes("l2")
    assert l2.pop(HARDWARE_ONLY) == "skipped"
    assert len(l2) == 8 and set(l2.values()) == {"passed"}, l2
    assert run.records("lifecycle", dest="poisoned") == []
    # The decoder file's device saw host_build_graph, then aicpu_build_graph, then
    # host_build_graph again: each start retired the other runtime's open worker first.
    device = run.records("test", nodeid=f"{DECODER}::TestGate::test_run[Hidden4k]")[0]["device"]
    lifecycle = [r for r in run.records("lifecycle", phase="l2") if r["device"] == device]
    started = [r["runtime"] for r in lifecycle if r["dest"] == "healthy"]
    retired = [r for r in lifecycle if str(r.get("reason") or "").startswith("retired")]
    assert "host_build_graph" in started[started.index("aicpu_build_graph") :], started
    assert len(retired) >= 2 and all(r["dest"] == "closed" for r in retired), lifecycle
    # The Resource test: a child of its own, on two devices, through the `devices` fixture.
    [child] = run.records("child", nodeid=SHARDED_SUM)
    assert child["devices"] == [0, 1] and child["returncode"] == 0
    assert run.outcomes("resource") == {SHARDED_SUM: "passed"}
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert (
        _last_line(run) == "simpler: 9 passed, 0 recovered, 0 flaky, 0 failed, 1 skipped -> exit 0"
    )
