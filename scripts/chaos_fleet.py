"""Chaos cells for a planned matrix: the ways a CI matrix loses or spoils a job's report.

- every job reported: the merged summary gives one run's verdicts, test by test, and its
  exit code;
- a job that never ran (its runner never came, its upload failed): red, the job named;
- a job killed with SIGKILL in its Resource phase (a runner lost mid-job): red, its run
  incomplete, never green on the tests it did finish;
- another platform's report in a job's place (a matrix entry run with the wrong session):
  red, the plan's job named as without a report.

``scripts/chaos.py`` runs :func:`fleet_cells` after its scenarios and prints each cell.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from chaos_cells import Cell
from chaos_processes import no_leftovers, signal_mid_resource_phase

from simpler.reporting.report_file import read_records
from simpler.reporting.verdicts import decide_verdicts, select_latest_runs

__all__ = ["fleet_cells"]

ROOT = Path(__file__).resolve().parents[1]
SUITE = "scripts/chaos_suite"
KILLED_TEST = f"{SUITE}/test_chaos_resource.py::test_child_fault"


def fleet_cells(workdir: Path) -> list[Cell]:
    folder = workdir / "fleet"
    folder.mkdir(parents=True, exist_ok=True)
    plan = folder / "plan.json"
    _simpler("plan", "--platform", "a5sim", "--runners", "1=r-1,2=r-2", "--jobs", "1=2,2=1",
             "--out", str(plan), "--", SUITE)  # fmt: skip
    jobs = json.loads(plan.read_text())["jobs"]
    reports = {job["id"]: folder / f"{job['id']}.jsonl" for job in jobs}
    for job in jobs:
        _job(job, reports[job["id"]], plan)
    one = folder / "one.jsonl"
    one_rc = _simpler("run", "--platform", "a5sim", "--device", "0-1", "--report", str(one),
                      "--", SUITE).returncode  # fmt: skip
    cells = [_merged_equals_one_run(plan, list(reports.values()), one, one_rc)]
    missing_id = jobs[0]["id"]
    others = [path for job_id, path in reports.items() if job_id != missing_id]
    cells.append(_missing_job(plan, others, missing_id))
    cells.append(_killed_job(folder, plan, jobs, reports))
    cells.append(_wrong_platform(folder, plan, jobs, reports))
    return cells


def _simpler(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    run_env = {**os.environ, "SIMPLER_OP_TIMEOUT_MS": "150", **(env or {})}
    for name in ("SIMPLER_PLAN", "SIMPLER_JOB", "SIMPLER_REPORT", "SIMPLER_HISTORY"):
        run_env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "simpler", *args], cwd=ROOT, env=run_env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip


def _job_argv(job: dict[str, object], report: Path, plan: Path, platform: str) -> list[str]:
    devices = "0" if job["devices"] == 1 else f"0-{int(str(job['devices'])) - 1}"
    return ["run", "--platform", platform, "--device", devices, "--report", str(report),
            "--plan", str(plan), "--job", str(job["id"]), "--", SUITE]  # fmt: skip


def _job(job: dict[str, object], report: Path, plan: Path, platform: str = "a5sim") -> int:
    return _simpler(*_job_argv(job, report, plan, platform)).returncode


def _merge(plan: Path, reports: list[Path]) -> subprocess.CompletedProcess[str]:
    files = [arg for report in reports for arg in ("--file", str(report))]
    return _simpler("report", *files, "--plan", str(plan))


def _verdict_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else done.stderr.strip()


def _verdicts(*paths: Path) -> dict[str, str]:
    records = select_latest_runs([read_records(path).records for path in paths])
    return {nodeid: v.outcome for nodeid, v in decide_verdicts(records).items()}


def _merged_equals_one_run(plan: Path, reports: list[Path], one: Path, one_rc: int) -> Cell:
    merged = _merge(plan, reports)
    alike = _verdicts(*reports) == _verdicts(one)
    ok = alike and merged.returncode == one_rc
    seen = f"{len(_verdicts(one))} tests alike: {alike}; exit {merged.returncode} vs {one_rc}"
    return "fleet: three jobs merge to one run", ok, seen


def _missing_job(plan: Path, reports: list[Path], missing_id: str) -> Cell:
    merged = _merge(plan, reports)
    line = _verdict_line(merged)
    ok = merged.returncode == 1 and missing_id in line and "without a report" in line
    return "fleet: a job that never reported", ok, f"exit {merged.returncode}: {line[-120:]}"


def _killed_job(
    folder: Path, plan: Path, jobs: list[dict[str, object]], reports: dict[str, Path]
) -> Cell:
    """The job that runs the child that hangs is killed while the child runs."""
    job = next(j for j in jobs if KILLED_TEST in list(j["units"]))  # type: ignore[call-overload]
    killed = folder / "killed.jsonl"
    run_id = f"chaos-fleet-killed-{os.getpid()}"
    env = {**os.environ, "SIMPLER_OP_TIMEOUT_MS": "150", "CHAOS_CHILD": "hang",
           "SIMPLER_RUN_ID": run_id}  # fmt: skip
    for name in ("SIMPLER_PLAN", "SIMPLER_JOB", "SIMPLER_REPORT", "SIMPLER_HISTORY"):
        env.pop(name, None)
    argv = [sys.executable, "-m", "simpler", *_job_argv(job, killed, plan, "a5sim")]
    with subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, text=True) as orchestrator:  # fmt: skip
        signal_mid_resource_phase(orchestrator, killed, signal.SIGKILL)
        orchestrator.wait(timeout=60)
    notes: list[str] = []
    no_leftovers(run_id, notes)  # a lost runner takes its processes with it; here, reap them
    others = [path for job_id, path in reports.items() if job_id != job["id"]]
    merged = _merge(plan, [*others, killed])
    line = _verdict_line(merged)
    ok = merged.returncode == 1 and "without a report" not in line
    return "fleet: a job killed mid-run", ok, f"exit {merged.returncode}: {line[-120:]}"


def _wrong_platform(
    folder: Path, plan: Path, jobs: list[dict[str, object]], reports: dict[str, Path]
) -> Cell:
    job = jobs[-1]
    wrong = folder / "wrong-platform.jsonl"
    _job(job, wrong, plan, platform="a2a3sim")
    others = [path for job_id, path in reports.items() if job_id != job["id"]]
    merged = _merge(plan, [*others, wrong])
    line = _verdict_line(merged)
    ok = merged.returncode == 1 and str(job["id"]) in line and "without a report" in line
    return "fleet: another platform's report", ok, f"exit {merged.returncode}: {line[-120:]}"
