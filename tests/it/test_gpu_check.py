"""scripts/gpu_check.py rehearsed on a CPU machine, so its one run on a GPU does not fail on a typo.

Three rehearsals of the same code: without a driver (every row says why nothing was measured),
on the simulated card (every measurement branch, with the simulator's numbers), and on the
test double of the CUDA driver (the cuda branches: CUresult names, memory, the raw reset).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from simpler.contract.settings import CUDA_DRIVER_ENV

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gpu_check.py"
FAULT_KERNELS = ["illegal_address", "trap", "device_assert", "misaligned"]
TRIGGER = (
    "tests/st/test_vector_add.py::TestVectorAddOnRingbuffer::"
    "test_operand_order_does_not_change_the_sum"
)


def _gpu_check(
    out: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "SIMPLER_OP_TIMEOUT_MS": "150", **(env or {})},
    )


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    doc = json.loads((out / "gpu_check.json").read_text())
    return {row["kind"]: row for row in doc["rows"]}


def _assert_scene_met_every_expectation(scene: dict[str, Any]) -> None:
    unmet = [e for e in scene["expectations"] if not e["met"]]
    assert not unmet, unmet
    assert scene["exit_code"] == 1 and scene["trigger"] == TRIGGER
    assert scene["victims"] and set(scene["victims"].values()) <= {"passed", "recovered"}


def test_without_a_driver_every_row_says_why_nothing_was_measured(tmp_path: Path) -> None:
    missing = "/nonexistent/libcuda.so.1"  # no driver here even on a GPU machine
    run = _gpu_check(tmp_path, "--reps", "1", "--spin-reps", "1", env={CUDA_DRIVER_ENV: missing})
    assert run.returncode == 0, run.stderr[-2000:]
    assert (tmp_path / "gpu_check.md").read_text() in run.stdout
    assert "nothing was measured" in run.stdout
    rows = _rows(tmp_path)
    assert list(rows) == [*FAULT_KERNELS, "spin", "scene"]
    driver_line = rows["spin"]["not_measured"]
    assert missing in driver_line and "\n" not in driver_line
    assert all(row["not_measured"] == driver_line for row in rows.values())
    assert f"not measured: {driver_line}" in run.stdout
    # The scene step ran too: `simpler run --platform cuda` refused in one line, exit 2.
    assert rows["scene"]["exit_code"] == 2 and missing in rows["scene"]["printed"]
    assert all(e["met"] for e in rows["scene"]["expectations"])


def test_the_simulated_card_rehearses_every_measurement(tmp_path: Path) -> None:
    run = _gpu_check(tmp_path, "--platform", "a5sim", "--reps", "2", "--spin-reps", "1")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "Rehearsal on the simulated card" in run.stdout
    rows = _rows(tmp_path)
    for kernel in FAULT_KERNELS:
        row = rows[kernel]
        assert row["reps"] == "2/2" and row["not_measured"] is None and not row["problems"]
        cells = row["cells"]
        assert cells["launch rc"] == "207001 at rtKernelLaunchWithHandleV2 x2"
        assert cells["sync rc"] == "not reached x2"  # the simulator refuses at the launch
        assert cells["repeats on next call"].startswith("2/2")
        assert cells["in-place reset heals"] == "2/2"
        assert cells["fresh process heals"] == "2/2"
    spin = rows["spin"]
    assert spin["reps"] == "1/1" and spin["cells"]["spin rc"].startswith("507046 at ")
    assert spin["cells"]["reset returned"].startswith("1/1")
    assert spin["cells"]["fresh process heals"] == "1/1"
    _assert_scene_met_every_expectation(rows["scene"])


def test_the_cuda_branches_run_against_the_test_double_driver(
    tmp_path: Path, fake_cuda_driver: str
) -> None:
    env = {CUDA_DRIVER_ENV: fake_cuda_driver}
    run = _gpu_check(tmp_path / "out", "--reps", "1", "--spin-reps", "1", env=env)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    doc = json.loads((tmp_path / "out" / "gpu_check.json").read_text())
    assert doc["mode"] == "gpu" and doc["card"]["compute_capability"]
    rows = _rows(tmp_path / "out")
    illegal = rows["illegal_address"]["cells"]
    assert illegal["launch rc"] == "0 CUDA_SUCCESS x1"
    assert illegal["sync rc"] == "700 CUDA_ERROR_ILLEGAL_ADDRESS at cuStreamQuery x1"
    for kernel in FAULT_KERNELS:
        assert rows[kernel]["cells"]["memory delta max"].endswith(" MiB")  # measured
        assert not rows[kernel]["problems"]
    spin = rows["spin"]["cells"]
    assert "process must end" in spin["spin rc"] and not rows["spin"]["problems"]
    assert spin["reset returned"].startswith("1/1")  # the double's reset waits out the spin
    _assert_scene_met_every_expectation(rows["scene"])
