"""``simpler plan -- PYTEST_ARGS``: a collected suite planned by device size, each L2 file and
each Resource test in exactly one job of a runner that fits it, on measured durations when
there are some and on estimates, then test counts, when there are none."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUITES = ["tests/it/scenarios/scenario_resource.py", "tests/it/scenarios/scenario_golden.py"]
RESOURCE = "tests/it/scenarios/scenario_resource.py"


def _plan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "simpler", "plan", "--runners", "1=cpu-1,2=gpu-2", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_each_unit_of_a_suite_lands_once_on_a_runner_that_fits(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    done = _plan("--target-minutes", "10", "--out", str(out), "--", *SUITES)
    assert done.returncode == 0, done.stderr
    assert "units planned on:" in done.stdout
    plan = json.loads(out.read_text())
    placed = {unit: job["devices"] for job in plan["jobs"] for unit in job["units"]}
    units = [unit for job in plan["jobs"] for unit in job["units"]]
    assert len(units) == len(set(units))  # never in two jobs
    assert placed[f"{RESOURCE}::test_crashes_with_sigsegv"] == 2  # the two-device test
    assert placed[f"{RESOURCE}::test_passes_on_its_device"] == 1
    assert placed["tests/it/scenarios/scenario_golden.py"] == 1  # an L2 file, whole


def test_measured_durations_are_planned_on_and_bad_input_is_one_line(tmp_path: Path) -> None:
    durations = tmp_path / "durations.json"
    durations.write_text(json.dumps({f"{RESOURCE}::test_crashes_with_sigsegv": 900.0}))
    done = _plan("--target-minutes", "10", "--durations", str(durations), "--format", "json",
                 "--", *SUITES)  # fmt: skip
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    two = [job for job in plan["jobs"] if job["devices"] == 2]
    assert len(two) == 1 and two[0]["est_wall_s"] >= 900
    refused = _plan("--target-minutes", "10", "--", "tests/it/scenarios/no_such_file.py")
    assert refused.returncode == 2
    assert len(refused.stderr.strip().splitlines()) == 1 and "Traceback" not in refused.stderr
    both = _plan("--target-minutes", "10", "--registry", str(durations), "--", *SUITES)
    assert both.returncode == 2 and "one" in both.stderr
