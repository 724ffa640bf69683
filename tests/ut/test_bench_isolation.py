"""The bench's generated suite: the tests it promises, and a planted contamination that fails
one process and passes where the last file runs alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import bench_isolation
import pytest
from bench_isolation import TESTS_PER_FILE, write_suite


def _pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args]
    return subprocess.run(argv, cwd=project, capture_output=True, text=True, check=False)


def test_the_planted_suite_fails_in_one_process_and_passes_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bench_isolation, "FILES", 3)

    tests = write_suite(tmp_path, 7, plant=True)

    assert tests == 3 * TESTS_PER_FILE + 2
    assert sorted(p.name for p in (tmp_path / "tests").glob("test_*.py")) == [
        "test_000.py", "test_001.py", "test_002.py"
    ]  # fmt: skip
    assert "LOOPS = 7\n" in (tmp_path / "tests" / "test_001.py").read_text()
    together = _pytest(tmp_path, "tests")
    assert together.returncode == 1, together.stdout
    assert "FAILED tests/test_002.py::test_finds_state_unset" in together.stdout
    assert f"1 failed, {tests - 1} passed" in together.stdout
    alone = _pytest(tmp_path, "tests/test_002.py")
    assert alone.returncode == 0 and f"{TESTS_PER_FILE + 1} passed" in alone.stdout


def test_the_unplanted_suite_passes_in_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bench_isolation, "FILES", 2)

    tests = write_suite(tmp_path, 1)

    done = _pytest(tmp_path, "tests")
    assert done.returncode == 0 and f"{tests} passed" in done.stdout, done.stdout


def test_calibration_gives_loops_of_the_tests_own_work() -> None:
    loops = bench_isolation.calibrate(0.001)

    assert loops >= 1
    assert bench_isolation._work_function()(loops) >= 0
