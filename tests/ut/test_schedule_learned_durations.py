"""``simpler schedule`` learns: a real run records what each job took, and the dry run
says which estimate each job got (measured, its own est_s, or the default)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from simpler.cli import main
from simpler.scheduler.durations import load_measurements

QUICK = [sys.executable, "-c", "pass"]
JOBS = [
    {"label": "measured", "devices": 2, "cmd": QUICK, "est_s": 500},
    {"label": "estimated", "devices": 1, "cmd": QUICK, "est_s": 20},
    {"label": "unknown", "devices": 1, "cmd": QUICK},
    {"label": "failing", "devices": 1, "cmd": [sys.executable, "-c", "raise SystemExit(1)"]},
]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # the durations file is .simpler/durations.json of the cwd
    (tmp_path / "jobs.json").write_text(json.dumps(JOBS))
    return tmp_path


def test_a_real_run_records_the_passing_jobs_for_the_next(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["schedule", "--devices", "0-3", "jobs.json"]) == 1  # "failing" fails
    capsys.readouterr()
    measured = load_measurements(workspace / ".simpler" / "durations.json")
    assert set(measured) == {"measured", "estimated", "unknown"}
    assert all(entry.count == 1 for entry in measured.values())


def test_the_dry_run_names_the_estimate_each_job_used(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    durations = workspace / ".simpler" / "durations.json"
    durations.parent.mkdir()
    entry = {"seconds": 3, "samples": [2, 3, 4], "count": 7}
    durations.write_text(json.dumps({"measured": entry}))

    assert main(["schedule", "--devices", "0-3", "--dry-run", "jobs.json"]) == 0
    plan = capsys.readouterr().out.splitlines()[:-1]  # the last line is the makespan
    lines = {line.split("  [")[0].split()[-1]: line for line in plan}
    assert lines["measured"].endswith("measured  [measured (7 samples)]")
    assert lines["estimated"].endswith("[est_s]")
    assert lines["unknown"].endswith("[default]")

    assert main(["schedule", "--devices", "0-3", "--dry-run", "--json", "jobs.json"]) == 0
    jobs = {job["label"]: job for job in json.loads(capsys.readouterr().out)["jobs"]}
    assert jobs["measured"]["estimate_from"] == "measured (7 samples)"
    assert jobs["measured"]["end_s"] - jobs["measured"]["start_s"] == 3.0  # not est_s 500
    assert (jobs["estimated"]["estimate_from"], jobs["estimated"]["estimate_s"]) == ("est_s", 20)
    assert jobs["unknown"]["estimate_from"] == "default"
