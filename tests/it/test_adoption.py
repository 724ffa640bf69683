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
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

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


def _plain_pytest(
    project: Path, *args: str, env_extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """pytest as the team ran it before simpler: nothing of simpler's in the environment."""
    projects = ("SIMPLER_", "CHIPSIM_", "STSIM_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(projects)} | (env_extra or {})
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
    # any other runtime's worker that then tried that card) and the card was retired.
    gave_up = run.records("lifecycle", dest="skipped")
    assert {(r["rc"], r["where"], r["device"]) for r in gave_up} == {
        (507033, "device_reset", gave_up[0]["device"])
    }
    assert [r["devices"] for r in run.records("device_retired")] == [[gave_up[0]["device"]]]
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


# The dispatcher example (tests/example_dispatcher): its own pytest_configure, runtestloop and
# st_worker fixture, runtime in `_st_runtime`, device counts in CASES, errors as RuntimeError.
# Its adoption: three ini keys and the hooks at the end of its conftest.py.

DISPATCHER = Path(__file__).resolve().parents[1] / "example_dispatcher"
ST_VECTOR_ADD = "tests/test_vector_add.py::TestVectorAdd::test_run"
ST_TRIGGER = f"{ST_VECTOR_ADD}[Small]"
ST_SAME_CLASS = [f"{ST_VECTOR_ADD}[Tiled]", f"{ST_VECTOR_ADD}[Ragged]"]
ST_ALLREDUCE = "tests/test_allreduce.py::TestAllReduce::test_run[TwoChips]"  # two devices
ST_ISOLATED = "tests/isolated/test_kv_cache.py::TestKvCache"  # its own class-scoped st_worker
ST_VERDICTS = {
    **dict.fromkeys([ST_TRIGGER, *ST_SAME_CLASS], "passed"),
    f"{ST_VECTOR_ADD}[Huge]": "skipped",  # its case runs on a2a3 only
    "tests/test_softmax.py::TestSoftmax::test_run[OneRow]": "passed",
    "tests/test_softmax.py::TestSoftmax::test_run[Batch]": "passed",
    f"{ST_ISOLATED}::test_write": "passed",
    f"{ST_ISOLATED}::test_read": "passed",
    ST_ALLREDUCE: "passed",
}
WORDS = "PASSED|FAILED|SKIPPED|ERROR"
VERDICT_LINE = re.compile(rf"({WORDS}) (tests/\S+)|(tests/\S+) ({WORDS})")


def _dispatcher(tmp_path: Path) -> Path:
    project = tmp_path / "example_dispatcher"
    shutil.copytree(DISPATCHER, project, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    (tmp_path / "locks").mkdir()
    return project


def _st_env(project: Path, **env: str) -> dict[str, str]:
    """A card is held by one process at a time (stsim's own locks): a shared one fails."""
    return {"STSIM_LOCK_DIR": str(project.parent / "locks"), "STSIM_FAULT": "", **env}


def _plain_verdicts(done: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """Each test's verdict as plain ``pytest -v`` printed it (the dispatcher's children too;
    ``-vv`` on top of ``_plain_pytest``'s ``-q``)."""
    verdicts = {}
    for found in VERDICT_LINE.finditer(done.stdout):
        word, nodeid = (found[1], found[2]) if found[1] else (found[4], found[3])
        verdicts[nodeid] = word.lower()
    return verdicts


def _st_run(simpler_run: Any, project: Path, devices: str, *args: str, **env: str) -> Any:
    return simpler_run(
        "run", "--platform", "stsim", "--device", devices, *args, "--", "tests/",
        cwd=project, env=_st_env(project, **env),
    )  # fmt: skip


@pytest.mark.parametrize("xdist", [(), ("-n", "2")], ids=["dispatched", "xdist"])
def test_the_dispatcher_projects_plain_pytest_is_its_own(tmp_path: Path, xdist: Any) -> None:
    project = _dispatcher(tmp_path)
    before = sorted(p for p in project.rglob("*") if "__pycache__" not in p.parts)
    args = ["-vv", "--platform", "stsim", "--device", "0-1", *xdist]
    done = _plain_pytest(project, *args, env_extra=_st_env(project))
    expected = dict(ST_VERDICTS)
    if xdist:  # an xdist worker has one device of --device: the two-chip case skips itself
        expected[ST_ALLREDUCE] = "skipped"
    else:  # its own dispatcher: one child pytest per runtime
        assert done.stdout.count("st-dispatch:") == 2, done.stdout[-3000:]
    assert _plain_verdicts(done) == expected, done.stdout[-3000:]
    assert not [line for line in done.stdout.splitlines() if line.startswith("simpler")]
    assert sorted(p for p in project.rglob("*") if "__pycache__" not in p.parts) == before


def test_the_dispatcher_project_runs_through_simpler_with_its_own_verdicts(
    simpler_run: Any, tmp_path: Path
) -> None:
    project = _dispatcher(tmp_path)
    run = _st_run(simpler_run, project, "0-1")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    l2, resource = run.outcomes("l2"), run.outcomes("resource")
    assert {**l2, **resource} == ST_VERDICTS  # one record per test: nothing dispatched twice
    assert len(run.records("test")) == len(ST_VERDICTS)
    assert "st-dispatch:" not in run.stdout
    # The pool served st_worker to the pooled tests: the project's hook made the runner.
    pooled = {r["nodeid"] for r in run.records("test") if r.get("worker")}
    assert pooled == {n for n, v in ST_VERDICTS.items() if v == "passed"} - {
        f"{ST_ISOLATED}::test_write",
        f"{ST_ISOLATED}::test_read",
        ST_ALLREDUCE,
    }
    # The Resource test: its device count from CASES, the project's own level-3 st_worker on
    # the two devices simpler allocated, which the project's --device held.
    [child] = run.records("child", nodeid=ST_ALLREDUCE)
    assert child["devices"] == [0, 1] and child["returncode"] == 0
    assert _last_line(run) == (
        "simpler: 8 passed, 0 recovered, 0 flaky, 0 failed, 1 skipped -> exit 0"
    )


def test_on_one_device_the_l2_process_is_simplers_not_the_projects_dispatcher(
    simpler_run: Any, tmp_path: Path
) -> None:
    run = _st_run(simpler_run, _dispatcher(tmp_path), "0", "--phases", "l2")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert run.outcomes("l2") == {n: v for n, v in ST_VERDICTS.items() if n != ST_ALLREDUCE}
    assert "st-dispatch:" not in run.stdout


def test_a_runtime_error_heals_in_place_in_the_dispatcher_project(
    simpler_run: Any, tmp_path: Path
) -> None:
    run = _st_run(simpler_run, _dispatcher(tmp_path), "0-1", STSIM_FAULT="vector_add")
    assert run.outcomes("l2")[ST_TRIGGER] == "failed"
    assert all(run.outcomes("l2")[n] == "passed" for n in ST_SAME_CLASS)
    poisoned = run.records("lifecycle", dest="poisoned")
    assert [(r["rc"], r["where"]) for r in poisoned] == [
        (507046, "aclrtSynchronizeStreamWithTimeout")
    ]
    healed = run.records("lifecycle", worker=poisoned[0]["worker"], dest="rebuilt")
    assert [r["source"] for r in healed] == ["force_reset"]
    assert run.outcomes("retry") == {ST_TRIGGER: "flaky"}
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]


def test_a_card_that_stays_failing_is_recovered_in_a_fresh_process(
    simpler_run: Any, tmp_path: Path
) -> None:
    env = {"STSIM_FAULT": "vector_add", "STSIM_STICKY": "1", "SIMPLER_RESET_ATTEMPTS": "2"}
    run = _st_run(simpler_run, _dispatcher(tmp_path), "0-2", **env)
    victims = {r["nodeid"] for r in run.records("poison_skip")}
    assert victims == set(ST_SAME_CLASS)
    assert run.outcomes("retry") == {**dict.fromkeys(victims, "recovered"), ST_TRIGGER: "flaky"}
    assert run.outcomes("resource") == {ST_ALLREDUCE: "passed"}
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("simpler_device_option=devize", "ini simpler_device_option = devize"),
        ("simpler_platform_option=platfrom", "ini simpler_platform_option = platfrom"),
        ("simpler_worker_fixture=st_wroker", "ini simpler_worker_fixture = st_wroker"),
    ],
)
def test_an_ini_key_naming_nothing_stops_the_run(
    simpler_run: Any, tmp_path: Path, override: str, named: str
) -> None:
    project = _dispatcher(tmp_path)
    run = simpler_run(
        "run", "--platform", "stsim", "--device", "0-1", "--", "-o", override, "tests/",
        cwd=project, env=_st_env(project),
    )  # fmt: skip
    assert run.returncode == 2
    said = (run.stdout + run.stderr).strip().splitlines()
    assert len(said) == 1 and named in said[0], said
    assert run.records("test") == []


def test_a_loop_simpler_cannot_bypass_stops_the_run(simpler_run: Any, tmp_path: Path) -> None:
    project = _dispatcher(tmp_path)
    isolated = project / "tests" / "isolated" / "conftest.py"
    loop = "\n@pytest.hookimpl(tryfirst=True)\ndef pytest_runtestloop(session):\n    return True\n"
    isolated.write_text(isolated.read_text() + "\n" + loop)
    run = _st_run(simpler_run, project, "0-1")
    assert run.returncode == 2
    said = (run.stdout + run.stderr).strip().splitlines()
    assert len(said) == 1 and f"{isolated}: its pytest_runtestloop" in said[0], said
    assert run.records("test") == []
