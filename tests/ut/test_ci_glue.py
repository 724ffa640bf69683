"""The CI glue: the matrix comes from nox's own session list, and no pipe hides an exit code."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = [{"session": "tests", "tags": ["ci"]}, {"session": "st_a5", "tags": ["ci", "sim"]}]


def _matrix(stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "ci_matrix.py"), *args],
        input=stdin,
        capture_output=True,
        text=True,
    )


def test_each_session_is_a_job_and_sharded_sessions_are_several() -> None:
    done = _matrix(json.dumps(SESSIONS), "--shards", "st_a5=3")
    assert done.returncode == 0
    name, _, payload = done.stdout.strip().partition("=")
    assert name == "matrix"
    assert json.loads(payload)["include"] == [
        {"session": "tests", "shard": ""},
        {"session": "st_a5", "shard": "1/3"},
        {"session": "st_a5", "shard": "2/3"},
        {"session": "st_a5", "shard": "3/3"},
    ]


def test_an_empty_session_list_is_an_error_not_an_empty_green_matrix() -> None:
    done = _matrix("[]")
    assert done.returncode == 2 and "no sessions" in done.stderr


def test_every_piped_workflow_step_sets_pipefail() -> None:
    workflow = (ROOT / ".github" / "workflows" / "ci.yml").read_text()
    blocks = re.findall(r"run: \|\n((?:\s{10,}.*\n)+)", workflow)
    piped = [b for b in blocks if re.search(r"[^|]\|[^|]", b)]
    assert piped, "expected at least one piped step"
    for block in piped:
        assert "pipefail" in block, f"a piped step without pipefail:\n{block}"


def test_the_ci_sessions_and_phases_are_all_listed_by_nox() -> None:
    listed = subprocess.run(
        [sys.executable, "-m", "nox", "-l", "--json", "-s", *ALL_SESSIONS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert {s["session"] for s in json.loads(listed)} == set(ALL_SESSIONS)


ALL_SESSIONS = [
    "tests",
    "lint",
    "st_a5",
    "st_a2a3",
    "l2",
    "resource",
    "retry_poisoned",
    "report",
    "capacity",
    "bench",
    "chaos",
]
