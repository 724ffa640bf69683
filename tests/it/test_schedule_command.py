"""``simpler schedule`` on a JOBS.json: simulated on a virtual clock, or run for real."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _jobs_file(tmp_path: Path, jobs: Any) -> str:
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps(jobs))
    return str(path)


MIXED = [
    {"label": "big", "devices": 4, "cmd": ["true", "{devices}"], "est_s": 100},
    {"label": "small-a", "devices": 1, "cmd": ["true"], "est_s": 50},
    {"label": "small-b", "devices": 1, "cmd": ["true"], "est_s": 50},
    {"label": "pair", "devices": 2, "cmd": ["true"], "est_s": 60},
]


def test_dry_run_json_places_every_job_without_double_booking(
    simpler_run: Any, tmp_path: Path
) -> None:
    run = simpler_run(
        "schedule", "--devices", "0-3", "--dry-run", "--json", _jobs_file(tmp_path, MIXED)
    )
    assert run.returncode == 0, run.stderr
    schedule = json.loads(run.stdout)
    assert set(schedule) >= {"makespan_s", "lower_bound_s", "utilization", "jobs"}
    placed = {j["label"]: j for j in schedule["jobs"]}
    assert set(placed) == {j["label"] for j in MIXED}
    assert len(placed["big"]["devices"]) == 4
    # (4*100 + 50 + 50 + 2*60) device-seconds over 4 devices
    assert schedule["makespan_s"] >= schedule["lower_bound_s"] == 155.0


def test_fifo_keeps_the_given_order(simpler_run: Any, tmp_path: Path) -> None:
    run = simpler_run(
        "schedule",
        "--devices",
        "0-3",
        "--dry-run",
        "--json",
        "--policy",
        "fifo",
        _jobs_file(tmp_path, MIXED),
    )
    starts = [
        j["start_s"]
        for j in sorted(
            json.loads(run.stdout)["jobs"],
            key=lambda j: [m["label"] for m in MIXED].index(j["label"]),
        )
    ]
    assert starts == sorted(starts)


def test_a_real_run_replaces_the_devices_placeholder(simpler_run: Any, tmp_path: Path) -> None:
    out = tmp_path / "seen"
    jobs = [
        {
            "label": "show",
            "devices": 2,
            "est_s": 1,
            "cmd": [
                sys.executable,
                "-c",
                f"import sys; open({str(out)!r}, 'w').write(sys.argv[1])",
                "{devices}",
            ],
        }
    ]
    run = simpler_run("schedule", "--devices", "4,5,7", _jobs_file(tmp_path, jobs))
    assert run.returncode == 0, run.stdout + run.stderr
    assert out.read_text() == "4-5"
    assert "PASS  show  devices=4-5" in run.stdout


def test_a_failing_command_fails_the_schedule_and_is_shown(
    simpler_run: Any, tmp_path: Path
) -> None:
    jobs = [
        {
            "label": "boom",
            "devices": 1,
            "est_s": 1,
            "cmd": [sys.executable, "-c", "print('the reason'); raise SystemExit(4)"],
        }
    ]
    run = simpler_run("schedule", "--devices", "0", _jobs_file(tmp_path, jobs))
    assert run.returncode == 1
    assert (
        "*** Resource phase failed: 1 child job(s) ***" in run.stdout and "the reason" in run.stdout
    )


@pytest.mark.parametrize(
    ("jobs", "names"),
    [
        ([{"label": "x", "devices": 9, "cmd": ["true"], "est_s": 1}], "never fit the pool of 2"),
        ([{"label": "x", "devices": 0, "cmd": ["true"], "est_s": 1}], "'devices' must be"),
        ([{"label": "x", "devices": 1, "cmd": "true", "est_s": 1}], "'cmd' must be"),
        ([{"label": "x", "devices": 1, "cmd": ["true"], "est_s": -1}], "'est_s' must be"),
        ([{"devices": 1, "cmd": ["true"]}], "'label' must be"),
        ({"label": "x"}, "must hold a JSON list"),
        (
            [
                {"label": "x", "devices": 1, "cmd": ["a"]},
                {"label": "x", "devices": 1, "cmd": ["b"]},
            ],
            "duplicate",
        ),
    ],
)
def test_bad_jobs_files_are_one_line_usage_errors(
    simpler_run: Any, tmp_path: Path, jobs: Any, names: str
) -> None:
    run = simpler_run("schedule", "--devices", "0-1", "--dry-run", _jobs_file(tmp_path, jobs))
    assert run.returncode == 2
    assert names in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert "Traceback" not in run.stderr


def test_missing_and_invalid_jobs_files(simpler_run: Any, tmp_path: Path) -> None:
    missing = simpler_run("schedule", "--devices", "0", str(tmp_path / "none.json"))
    assert missing.returncode == 2 and "cannot read jobs file" in missing.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    invalid = simpler_run("schedule", "--devices", "0", str(bad))
    assert invalid.returncode == 2 and "is not valid JSON" in invalid.stderr


def _collected(suite: str) -> set[str]:
    """The suite's tests as plain pytest collects them: no simpler code decides what counts."""
    listing = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", suite],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return {line for line in listing.stdout.splitlines() if line.startswith(f"{suite}/")}


def test_shards_cover_the_scene_suite_once_and_merge_into_one_summary(
    simpler_run: Any, tmp_path: Path
) -> None:
    shards = [
        simpler_run(
            "run", "--platform", "a5sim", "--device", "0-1", "--shard", f"{i}/3", "--", "tests/st"
        )
        for i in (1, 2, 3)
    ]
    assert [s.returncode for s in shards] == [0, 0, 0]
    per_shard = [set(s.outcomes("l2")) | set(s.outcomes("resource")) for s in shards]
    assert all(per_shard)
    for a, b in itertools.combinations(per_shard, 2):
        assert not a & b, f"ran in two shards: {sorted(a & b)}"
    suite = _collected("tests/st")
    union = set().union(*per_shard)
    assert union == suite  # pytest names the tests in no shard, or in no suite
    merged = simpler_run("report", *[arg for s in shards for arg in ("--file", str(s.report))])
    assert merged.returncode == 0
    assert merged.stdout.count("simpler summary") == 1
    assert f"simpler: {len(suite)} passed" in merged.stdout
