"""Kernels in the impact map, end to end: a project's own card says which sources each kernel
is built from (runner.h's ``simpler_kernel_sources``); after a change to one kernel's source,
``simpler affected`` selects the tests that launched that kernel and no other test, and a
change to the card's C++ that no kernel names runs everything and says why."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

SCENARIO = Path(__file__).resolve().parent / "scenarios" / "kernel_card"
RUNNER_DIR = Path(__file__).resolve().parents[2] / "simpler" / "runner"
FILL, TWICE = "tests/test_kernels.py::test_fill", "tests/test_kernels.py::test_twice"
NO_DEVICE = "tests/test_kernels.py::test_no_device"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, capture_output=True, check=True)


@pytest.fixture
def project(tmp_path: Path, simpler_run: Any) -> tuple[Path, dict[str, str]]:
    """The project at its first commit, its map kept; the environment its runs need."""
    root = tmp_path / "project"
    shutil.copytree(SCENARIO, root / "card", ignore=shutil.ignore_patterns("scenario_*.py"))
    (root / "tests").mkdir()
    shutil.copy(SCENARIO / "scenario_kernels.py", root / "tests" / "test_kernels.py")
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / ".gitignore").write_text(".simpler/\n.coverage*\n__pycache__/\n")
    compiler = shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        pytest.fail("no C++ compiler (c++ or g++) on PATH: the project requires one")
    library = tmp_path / "libkcard.so"  # built outside the checkout, as a build tree is
    subprocess.run(
        [compiler, "-std=c++17", "-O2", "-fPIC", "-shared", f"-I{RUNNER_DIR}",
         "-o", str(library), str(root / "card" / "card.cpp")],
        check=True,
    )  # fmt: skip
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    env = {"SIMPLER_RUNNER_LIBRARY": str(library)}
    built = simpler_run.suite(
        "tests", platform="kcard", device="0", options=("--impact-map",), cwd=root, env=env
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    assert ": 3 tests, " in built.stdout and ", 2 kernels, kept in " in built.stdout
    (fill,) = built.records("test", nodeid=FILL)
    assert fill["kernels"] == {"fill": [str(root / "card" / "kernels" / "fill.h")]}
    return root, env


def _selected(simpler_run: Any, root: Path, env: dict[str, str]) -> dict[str, Any]:
    done = simpler_run("affected", "HEAD", "--format", "json", "--", "tests", cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    selected = {t["nodeid"]: t["reasons"] for t in document["tests"] if t["selected"]}
    return {"run_all": document["run_all"], "selected": selected}


def test_a_kernel_source_change_selects_the_tests_that_launched_it_and_no_other(
    simpler_run: Any, project: tuple[Path, dict[str, str]]
) -> None:
    root, env = project
    source = root / "card" / "kernels" / "twice.h"
    source.write_text(source.read_text().replace("2 * x[i]", "x[i] + x[i]"))
    assert _selected(simpler_run, root, env) == {
        "run_all": None,
        "selected": {TWICE: ["launched kernel twice (card/kernels/twice.h changed)"]},
    }


def test_a_comment_in_a_kernel_source_selects_nothing(
    simpler_run: Any, project: tuple[Path, dict[str, str]]
) -> None:
    root, env = project
    source = root / "card" / "kernels" / "fill.h"
    source.write_text(source.read_text() + "\n// a note for the next reader\n")
    assert _selected(simpler_run, root, env) == {"run_all": None, "selected": {}}


def test_c_plus_plus_no_kernel_names_runs_everything_and_says_why(
    simpler_run: Any, project: tuple[Path, dict[str, str]]
) -> None:
    root, env = project
    card = root / "card" / "card.cpp"
    card.write_text(card.read_text().replace("int probe() override { return 1; }",
                                             "int probe() override { return 1 + 0; }"))  # fmt: skip
    decision = _selected(simpler_run, root, env)
    assert decision["run_all"] == (
        "card/card.cpp changed: C/C++ that no kernel in the map was built from"
    )
    assert sorted(decision["selected"]) == sorted([FILL, TWICE, NO_DEVICE])
