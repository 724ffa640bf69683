"""Through ``simpler run``: a runner library compiled apart from simpler, against runner.h
alone, runs the L2 phase: its dtypes round-trip, its fault heals by its own force reset."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

SCENARIO = Path(__file__).resolve().parent / "scenarios" / "runner_library"
RUNNER_DIR = Path(__file__).resolve().parents[2] / "simpler" / "runner"
TRIGGER = "test_tiny.py::TestTrigger::test_fault"
DTYPES = [
    "test_tiny.py::TestDtypes::test_iota_fills_an_int32_out",
    "test_tiny.py::TestDtypes::test_axpy_updates_a_float64_inout",
    "test_tiny.py::TestDtypes::test_a_wrong_signature_is_a_usage_error",
]
AFTER_HEAL = ["test_tiny.py::TestAfterHeal::test_iota", "test_tiny.py::TestAfterHeal::test_axpy"]


def build_tiny_runner(out_dir: Path) -> Path:
    """tiny_runner.cpp built the way a team would: the system compiler, runner.h on the path."""
    compiler = shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        pytest.fail("no C++ compiler (c++ or g++) on PATH: the project requires one")
    library = out_dir / "libtiny_runner.so"
    source = SCENARIO / "tiny_runner.cpp"
    command = [compiler, "-std=c++17", "-O2", "-fPIC", "-shared", f"-I{RUNNER_DIR}"]
    subprocess.run([*command, "-o", str(library), str(source)], check=True)
    return library


def test_a_separately_built_library_runs_the_l2_phase(simpler_run: Any, tmp_path: Path) -> None:
    library = build_tiny_runner(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(SCENARIO / "scenario_tiny.py", project / "test_tiny.py")
    (project / "pytest.ini").write_text("[pytest]\n")  # the project is its own rootdir

    run = simpler_run(
        "run", "--platform", "tinyhw", "--device", "0", "--phases", "l2", "--", ".",
        cwd=project,
        env={"SIMPLER_RUNNER_LIBRARY": str(library)},
    )  # fmt: skip

    outcomes = run.outcomes("l2")
    detail = f"{outcomes}\n{run.stdout[-3000:]}{run.stderr[-2000:]}"
    assert outcomes[TRIGGER] == "failed", detail
    assert all(outcomes[n] == "passed" for n in DTYPES + AFTER_HEAL), detail
    path = [(r["source"], r["dest"]) for r in run.records("lifecycle")]
    assert ("poisoned", "force_reset") in path and ("force_reset", "rebuilt") in path, path
    poisoned = run.records("lifecycle", dest="poisoned")
    assert [(r["rc"], r["where"], r["runtime"]) for r in poisoned] == [
        (7101, "tinyLaunch", "tinyrt")
    ]
    assert run.returncode == 1  # the trigger's failure stands: no retry phase was asked for
