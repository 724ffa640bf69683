"""``simpler report --plan F``: a planned job is found by its share and its platform, and a
job without a report turns the verdict red whatever the others said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simpler.contract import EXIT_FAILED, EXIT_INFRA
from simpler.reporting.records import PhaseRecord
from simpler.reporting.summary import Ruling
from simpler.split.missing_jobs import expected_jobs, missing_jobs, missing_ruling
from simpler.usage import UsageError


def _plan(tmp_path: Path, platform: str, name: str = "plan.json") -> Path:
    jobs = [{"id": f"cpu-{i}", "runner": "cpu", "devices": 2, "units": [f"t{i}.py"]}
            for i in (1, 2)]  # fmt: skip
    path = tmp_path / name
    path.write_text(json.dumps({"schema": 1, "platform": platform, "jobs": jobs}))
    return path


def _start(shard: str, platform: str) -> PhaseRecord:
    return PhaseRecord({"type": "phase", "event": "start", "shard": shard, "platform": platform})


def test_a_job_counts_only_with_its_own_platforms_report(tmp_path: Path) -> None:
    a5 = _plan(tmp_path, "a5sim", "a5.json")
    a2a3 = _plan(tmp_path, "a2a3sim", "a2a3.json")
    expected = expected_jobs([a5, a2a3], "simpler report")
    records = [_start("job cpu-1", "a5sim"), _start("job cpu-2", "a5sim"),
               _start("job cpu-1", "a2a3sim")]  # fmt: skip
    missing = missing_jobs(records, expected)
    assert [(job.platform, job.id) for job in missing] == [("a2a3sim", "cpu-2")]


def test_missing_jobs_make_the_verdict_red_and_keep_a_worse_ruling(tmp_path: Path) -> None:
    missing = expected_jobs([_plan(tmp_path, "a5sim")], "simpler report")
    assert missing_ruling([], None) is None
    red = missing_ruling(missing, None)
    assert red is not None and red.code == EXIT_FAILED and "cpu-1" in red.reason
    worse = missing_ruling(missing[:1], Ruling(EXIT_INFRA, "the report phase crashed"))
    assert worse is not None and worse.code == EXIT_INFRA
    assert "crashed" in worse.reason and "cpu-1" in worse.reason


def test_a_registry_plan_is_not_a_plan_of_reports(tmp_path: Path) -> None:
    path = tmp_path / "registry-plan.json"
    path.write_text(json.dumps({"schema": 1, "jobs": [{"id": "g-1", "devices": 1, "units": [0]}]}))
    with pytest.raises(UsageError, match="plans a registry"):
        expected_jobs([path], "simpler report")
