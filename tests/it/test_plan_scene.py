"""The scene suite as three planned jobs, each on its own devices with its own report file:
merged with ``simpler report --plan``, they give one run's verdicts, test by test, and its
exit code (issue 25). How evenly the jobs finish is a figure of ``nox -s bench`` (fleet), not
a timing assertion here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from simpler.reporting.report_file import read_records
from simpler.reporting.verdicts import decide_verdicts, select_latest_runs

ROOT = Path(__file__).resolve().parents[2]
SUITE = "tests/st"


def _simpler(*args: str) -> subprocess.CompletedProcess[str]:
    steering = ("SIMPLER_PLAN", "SIMPLER_JOB", "SIMPLER_REPORT", "SIMPLER_RUN_ID")
    env = {k: v for k, v in os.environ.items() if k not in steering}
    return subprocess.run([sys.executable, "-m", "simpler", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip


def _verdicts(*paths: Path) -> dict[str, str]:
    records = select_latest_runs([read_records(path).records for path in paths])
    return {nodeid: v.outcome for nodeid, v in decide_verdicts(records).items()}


def test_three_planned_jobs_merge_to_the_verdicts_and_exit_code_of_one_run(
    tmp_path: Path,
) -> None:
    one = tmp_path / "one.jsonl"
    whole = _simpler("run", "--platform", "a5sim", "--device", "0-1", "--report", str(one),
                     "--", SUITE)  # fmt: skip
    assert whole.returncode in (0, 1), whole.stderr[-2000:]
    durations = tmp_path / "durations.json"
    db = tmp_path / "history.db"
    assert _simpler("history", "import", "--db", str(db), str(one)).returncode == 0
    assert (
        _simpler("history", "durations", "--db", str(db), "--out", str(durations)).returncode == 0
    )
    plan = tmp_path / "plan.json"
    planned = _simpler("plan", "--platform", "a5sim", "--runners", "2=runner-2", "--jobs", "2=3",
                       "--durations", str(durations), "--out", str(plan), "--", SUITE)  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    assert "8 on durations" in planned.stdout  # every unit planned on the earlier run's times
    jobs = [job["id"] for job in json.loads(plan.read_text())["jobs"]]
    assert len(jobs) == 3
    reports = [tmp_path / f"{job}.jsonl" for job in jobs]
    for job, report in zip(jobs, reports, strict=True):
        done = _simpler("run", "--platform", "a5sim", "--device", "0-1", "--report", str(report),
                        "--plan", str(plan), "--job", job, "--", SUITE)  # fmt: skip
        assert done.returncode in (0, 1), done.stderr[-2000:]
    files = [arg for report in reports for arg in ("--file", str(report))]
    merged = _simpler("report", *files, "--plan", str(plan))
    assert merged.returncode == whole.returncode, merged.stdout[-2000:]
    assert _verdicts(*reports) == _verdicts(one)
    assert len(_verdicts(one)) > 50
