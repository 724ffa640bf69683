"""The CI glue: the matrix comes from nox's own session list, and no pipe hides an exit code."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = [{"session": "tests", "tags": ["ci"]}, {"session": "st_a5", "tags": ["ci", "sim"]}]


def _matrix(stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "ci_matrix.py"), *args],
        input=stdin,
        capture_output=True,
        text=True,
    )


def test_each_session_is_a_job_and_planned_sessions_are_their_plans_jobs(tmp_path: Path) -> None:
    plan = tmp_path / "st_a5.json"
    jobs = [{"id": "cpu-1", "runner": "ubuntu-latest", "devices": 1, "units": ["a.py"]},
            {"id": "gpu-8-1", "runner": "gpu-8", "devices": 8, "units": ["b.py::t"]}]  # fmt: skip
    plan.write_text(json.dumps({"schema": 1, "jobs": jobs}))
    done = _matrix(json.dumps(SESSIONS), "--plan", f"st_a5={plan}")
    assert done.returncode == 0, done.stderr
    name, _, payload = done.stdout.strip().partition("=")
    assert name == "matrix"
    assert json.loads(payload)["include"] == [
        {"session": "tests", "runner": "ubuntu-latest", "devices": "", "job": ""},
        {"session": "st_a5", "runner": "ubuntu-latest", "devices": "0", "job": "cpu-1"},
        {"session": "st_a5", "runner": "gpu-8", "devices": "0-7", "job": "gpu-8-1"},
    ]


def test_a_plan_for_a_session_nox_does_not_list_or_an_empty_plan_is_refused(
    tmp_path: Path,
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"schema": 1, "jobs": []}))
    empty = _matrix(json.dumps(SESSIONS), "--plan", f"st_a5={plan}")
    assert empty.returncode == 2 and "no jobs" in empty.stderr
    plan.write_text(json.dumps({"schema": 1, "jobs": [
        {"id": "c-1", "runner": "c", "devices": 1, "units": []}]}))  # fmt: skip
    stray = _matrix(json.dumps(SESSIONS), "--plan", f"st_a2a3={plan}")
    assert stray.returncode == 2 and "st_a2a3" in stray.stderr


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


def _noxfile() -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location("simpler_noxfile", ROOT / "noxfile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_scene_sessions_keep_the_map_or_select_as_ci_asks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    impact_args = getattr(_noxfile(), "_impact_args")  # noqa: B009 - a module loaded by path
    monkeypatch.delenv("SIMPLER_IMPACT_MAP", raising=False)
    monkeypatch.delenv("SIMPLER_AFFECTED_SINCE", raising=False)
    assert impact_args() == []
    monkeypatch.setenv("SIMPLER_IMPACT_MAP", "1")
    assert impact_args() == ["--impact-map"]
    monkeypatch.setenv("SIMPLER_IMPACT_MAP", "")
    monkeypatch.setenv("SIMPLER_AFFECTED_SINCE", "origin/main")
    assert impact_args() == ["--affected-since", "origin/main"]


def test_the_workflow_keeps_maps_on_the_default_branch_and_selects_on_pull_requests() -> None:
    """The map is built by the full runs on pushes to the default branch, travels beside each
    report to the summary job's history, and pull requests select from it with the history
    they restore and the whole git history their merge-base needs."""
    workflow = (ROOT / ".github" / "workflows" / "ci.yml").read_text()
    session = workflow[workflow.index("\n  session:") : workflow.index("\n  other-pythons:")]
    keep = re.search(r"SIMPLER_IMPACT_MAP: \$\{\{(.*)\}\}", session)
    select = re.search(r"SIMPLER_AFFECTED_SINCE: \$\{\{(.*)\}\}", session)
    assert keep and "github.event_name == 'push'" in keep.group(1)
    assert "github.ref_name == github.event.repository.default_branch" in keep.group(1)
    assert select and "github.event_name == 'pull_request'" in select.group(1)
    assert "format('origin/{0}', github.base_ref)" in select.group(1)
    assert "fetch-depth: ${{ env.SIMPLER_AFFECTED_SINCE != '' && '0' || '1' }}" in session
    assert "path: .simpler/history.db" in session and "cache/save" not in session
    assert ".simpler/impact/" in session  # the map travels with the report
    assert "simpler history import" in workflow[workflow.index("\n  summary:") :]
