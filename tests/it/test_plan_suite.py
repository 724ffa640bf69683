"""``simpler plan -- PYTEST_ARGS``: a collected suite planned by device size, each L2 file and
each Resource test in exactly one job of a runner that fits it, on measured durations when
there are some and on estimates, then test counts, when there are none."""

from __future__ import annotations

import json
import os
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
    # An L2 file, whole: here on the 2-device runner's idle device, where it ends sooner.
    assert "tests/it/scenarios/scenario_golden.py" in placed


def test_measured_durations_are_planned_on_and_bad_input_is_one_line(tmp_path: Path) -> None:
    durations = tmp_path / "durations.json"
    durations.write_text(json.dumps({f"{RESOURCE}::test_crashes_with_sigsegv": 900.0}))
    done = _plan("--target-minutes", "10", "--durations", str(durations), "--format", "json",
                 "--", *SUITES)  # fmt: skip
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    two = [job for job in plan["jobs"] if job["devices"] == 2]
    assert len(two) == 1 and two[0]["est_wall_s"] >= 900
    # The L2 phase's start-up the history measured is added to every job with L2 files,
    # unless --phase-startup says otherwise.
    measured = {f"{RESOURCE}::test_crashes_with_sigsegv": 900.0, "startup:l2": {
        "seconds": 5.0, "samples": [5.0], "count": 1}}  # fmt: skip
    durations.write_text(json.dumps(measured))
    table = _plan("--target-minutes", "10", "--durations", str(durations), "--", *SUITES)
    assert table.returncode == 0 and "start-ups: run 20.0 s, l2 5.0 s" in table.stdout
    given = _plan("--target-minutes", "10", "--durations", str(durations), "--phase-startup",
                  "l2=1", "--", *SUITES)  # fmt: skip
    assert "start-ups: run 20.0 s, l2 1.0 s" in given.stdout
    refused = _plan("--target-minutes", "10", "--", "tests/it/scenarios/no_such_file.py")
    assert refused.returncode == 2
    assert len(refused.stderr.strip().splitlines()) == 1 and "Traceback" not in refused.stderr
    both = _plan("--target-minutes", "10", "--registry", str(durations), "--", *SUITES)
    assert both.returncode == 2 and "one" in both.stderr


def test_the_jobs_of_a_plan_run_every_test_exactly_once(tmp_path: Path) -> None:
    suites = ["tests/it/scenarios/scenario_history_suite.py", *SUITES[1:], RESOURCE]
    plan_file = tmp_path / "plan.json"
    planned = _plan("--jobs", "1=2,2=1", "--out", str(plan_file), "--", *suites)
    assert planned.returncode == 0, planned.stderr
    jobs = json.loads(plan_file.read_text())["jobs"]
    ran: list[str] = []
    reports: list[str] = []
    for job in jobs:
        report = tmp_path / f"{job['id']}.jsonl"
        reports += ["--file", str(report)]
        done = subprocess.run(
            [sys.executable, "-m", "simpler", "run", "--platform", "a5sim",
             "--device", "0-1" if job["devices"] == 2 else "0", "--report", str(report),
             "--plan", str(plan_file), "--job", job["id"], "--phases", "l2,resource",
             "--", *suites],
            cwd=ROOT, capture_output=True, text=True, timeout=300,
            env={**os.environ, "SIMPLER_OP_TIMEOUT_MS": "150"},
        )  # fmt: skip
        assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
        records = [json.loads(line) for line in report.read_text().splitlines() if line]
        # A crashed or hung child leaves a child record, not a test record: both name it.
        ran += sorted({r["nodeid"] for r in records if r.get("type") in ("test", "child")})
        assert all(r.get("shard") == f"job {job['id']}" for r in records if r["type"] == "phase"
                   and r.get("event") == "start")  # fmt: skip
    collected = _collected(suites)
    assert sorted(ran) == sorted(collected)  # each test in one job, none in two
    _check_missing_jobs_are_red(plan_file, reports, jobs[-1]["id"])
    wrong = subprocess.run(
        [sys.executable, "-m", "simpler", "run", "--platform", "a5sim", "--device", "0",
         "--plan", str(plan_file), "--job", "no-such-job", "--", *suites],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert wrong.returncode == 2 and "no-such-job is not in the plan" in wrong.stderr


def _check_missing_jobs_are_red(plan_file: Path, reports: list[str], last_job: str) -> None:
    """Merged with --plan, all the jobs' reports give the verdict they give alone; without the
    last job's, the verdict is red and names that job."""

    def merged(files: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "simpler", "report", *files, "--plan", str(plan_file)],
            cwd=ROOT, capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    whole = merged(reports)
    unplanned = subprocess.run(
        [sys.executable, "-m", "simpler", "report", *reports],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert whole.returncode == unplanned.returncode, whole.stdout[-2000:]
    assert "without a report" not in whole.stdout
    short = merged(reports[:-2])
    assert short.returncode == 1, short.stdout[-2000:]
    verdict = short.stdout.strip().splitlines()[-1]
    assert "planned job(s) without a report" in verdict and last_job in verdict, verdict


def _collected(suites: list[str]) -> list[str]:
    listed = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         *suites],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return [line for line in listed.stdout.splitlines() if "::" in line]
