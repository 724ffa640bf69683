"""simpler's plugin in someone else's project: invisible until asked for (docs/design.md, "The
pytest plugin in other projects").

A small plain project, written into tmp_path, whose conftest defines the original device
dispatcher's options (``--platform``, ``--device``, ``--runtime``, ``--max-parallel``,
``--level``, ``--case``), runs with plain ``pytest`` in this environment, where simpler's
plugin loads through its entry point: alone and under ``-n 3``, it passes and writes nothing.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from processes import run_python_m

from simpler import report

CONFTEST = """
def pytest_addoption(parser):
    parser.addoption("--platform", default="a2a3")
    parser.addoption("--device", default="0")
    parser.addoption("--runtime", default="host_build_graph")
    parser.addoption("--max-parallel", type=int, default=1)
    parser.addoption("--level", type=int, default=2)
    parser.addoption("--case", default=None)
"""
TESTS = """
import pytest


def test_reads_its_own_platform(request):
    assert request.config.getoption("platform") == "a5"
    assert request.config.getoption("device") == "4-7"
    assert request.config.getoption("max_parallel") == 8


def test_reads_its_other_options(request):
    assert request.config.getoption("runtime") == "tensormap"
    assert request.config.getoption("level") == 3
    assert request.config.getoption("case") == "c1"


@pytest.mark.runtime("tensormap")
def test_uses_simplers_marker_names():
    pass


@pytest.mark.device_count(2, est=1.0)
def test_device_count_marker():
    pass


@pytest.mark.parametrize("n", range(6))
def test_plain(n):
    assert n * 0 == 0
"""
PROJECT_ARGS = (
    *("--platform", "a5", "--device", "4-7", "--max-parallel", "8"),
    *("--runtime", "tensormap", "--level", "3", "--case", "c1"),
    *("--strict-markers", "-p", "no:cacheprovider", "-rA"),
)
TESTS_IN_PROJECT = 10


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    (root / "conftest.py").write_text(CONFTEST)
    (root / "tests" / "test_things.py").write_text(TESTS)
    (root / "pytest.ini").write_text("[pytest]\n")
    return root


def _pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Plain pytest in the project, as its own CI would run it (no ``simpler run`` around)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIMPLER_")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__: the project must stay untouched
    return run_python_m("pytest", *args, cwd=project, env=env, timeout=240)


def _listing(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*")}


@pytest.mark.parametrize("xdist", [(), ("-n", "3")], ids=["alone", "xdist-3"])
def test_a_plain_project_runs_as_without_simpler(project: Path, xdist: tuple[str, ...]) -> None:
    before = _listing(project)
    run = _pytest(project, *PROJECT_ARGS, *xdist)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"{TESTS_IN_PROJECT} passed" in run.stdout
    assert _listing(project) == before  # no .simpler/, no report, no log
    # No class lines, no simpler summary: pytest's own output only.
    lines = run.stdout.splitlines()
    assert not [line for line in lines if line.startswith(("PASS  ", "FAIL  ", "simpler"))]


def test_an_explicit_simpler_option_activates_the_plugin(project: Path, tmp_path: Path) -> None:
    records = tmp_path / "out" / "report.jsonl"
    before = _listing(project)
    run = _pytest(project, *PROJECT_ARGS, "--simpler-report", str(records))
    assert run.returncode == 0, run.stdout + run.stderr
    assert _listing(project) == before
    tests = [r for r in report.read(records) if r["type"] == "test"]
    assert len(tests) == TESTS_IN_PROJECT
    assert {r["outcome"] for r in tests} == {"passed"}


def test_an_ini_key_activates_the_plugin(project: Path, tmp_path: Path) -> None:
    records = tmp_path / "ini-report.jsonl"
    (project / "pytest.ini").write_text(f"[pytest]\nsimpler_report = {records}\n")
    run = _pytest(project, *PROJECT_ARGS, "tests/test_things.py::test_plain")
    assert run.returncode == 0, run.stdout + run.stderr
    assert len([r for r in report.read(records) if r["type"] == "test"]) == 6


WORKER_TESTS = """
def test_uses_a_device(worker):
    assert worker.runnable
"""


def test_an_xdist_worker_without_a_device_refuses_only_its_worker_tests(project: Path) -> None:
    """The device-sharing guard sits in the ``worker`` fixture: no session-wide refusal.

    Inactive, device 0 is the only device: ``--dist each`` runs the test on both xdist
    workers; gw0 holds device 0, gw1 has none and its test errors in setup saying so, while
    the tests that use no device pass on both.
    """
    (project / "tests" / "test_worker.py").write_text(WORKER_TESTS)
    run = _pytest(project, *PROJECT_ARGS, "-n", "2", "--dist", "each")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "has no device of its own" in run.stdout
    assert f"{2 * TESTS_IN_PROJECT + 1} passed, 1 error" in run.stdout
