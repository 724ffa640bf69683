"""The CI history on a server: the ``SIMPLER_HISTORY_URL`` secret reaches only the env of the
step that uses it, never a script, and the history's cache steps stand down when it is set.
The history step's own script runs here too, on a file and on a real server.

The workflow is read line by line, as the other workflow tests read it: a YAML parser is no
dependency of the tests, and the workflow's block style makes each line's parents its
less-indented lines above it.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import textwrap
import time
from contextlib import closing
from pathlib import Path

import pytest
from test_history_attribution import Run, hang_with_victims

from simpler.base.compat import tomllib
from simpler.history.schema import DEFAULT_DB
from simpler.history.store import store_ref

ROOT = Path(__file__).resolve().parents[2]
CI = ROOT / ".github" / "workflows" / "ci.yml"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
SECRET = re.compile(r"secrets\.SIMPLER_HISTORY_URL\b")
# The two spellings allowed: the URL as a step's env value, and the job's boolean flag.
AS_STEP_ENV = re.compile(r"\s*[A-Z_]+: \$\{\{ secrets\.SIMPLER_HISTORY_URL \}\}")
AS_FLAG = re.compile(r"\s*HISTORY_ON_SERVER: \$\{\{ secrets\.SIMPLER_HISTORY_URL != '' \}\}")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _parents(lines: list[str], index: int) -> list[str]:
    """The lines ``lines[index]`` sits under, nearest first, stripped."""
    parents: list[str] = []
    depth = _indent(lines[index])
    for line in reversed(lines[:index]):
        if line.strip() and not line.strip().startswith("#") and _indent(line) < depth:
            parents.append(line.strip())
            depth = _indent(line)
    return parents


def _steps(text: str) -> list[str]:
    """Each step of each job, as its text from its ``- `` to the next step or job."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("      - ")]
    steps = []
    for start in starts:
        end = start + 1
        while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > 6):
            end += 1
        steps.append("\n".join(lines[start:end]))
    return steps


def _runs(text: str) -> list[str]:
    """Every ``run:`` script: a one-line run, or a block's lines."""
    lines = text.splitlines()
    scripts = []
    for i, line in enumerate(lines):
        found = re.match(r"\s*(?:- )?run: ?(.*)$", line)
        if not found:
            continue
        if found[1] not in ("|", ">", "|-", ">-"):
            scripts.append(found[1])
            continue
        body = []
        for inner in lines[i + 1 :]:
            if inner.strip() and _indent(inner) <= _indent(line):
                break
            body.append(inner)
        scripts.append("\n".join(body))
    return scripts


def test_the_url_secret_is_only_a_steps_env_value_or_the_jobs_boolean_flag() -> None:
    lines = CI.read_text().splitlines()
    found = [i for i, line in enumerate(lines) if SECRET.search(line)]
    assert found, "the summary job reads the history server's URL from its secret"
    for i in found:
        line, parents = lines[i], _parents(lines, i)
        where = f"ci.yml line {i + 1}: {line.strip()}"
        assert len(SECRET.findall(line)) == 1, where
        if AS_FLAG.fullmatch(line):
            assert parents[:2] == ["env:", "summary:"], f"{where}: the summary job's own env"
        else:
            assert AS_STEP_ENV.fullmatch(line), f"{where}: only a step's env may hold the URL"
            assert parents[0] == "env:" and parents[1].startswith("- "), f"{where}: {parents}"
    assert sum(bool(AS_STEP_ENV.fullmatch(lines[i])) for i in found) == 1, "one step, no more"


def test_the_step_given_the_url_is_the_history_step_and_it_names_the_store() -> None:
    holders = [step for step in _steps(CI.read_text()) if AS_STEP_ENV.search(step)]
    assert len(holders) == 1
    assert "simpler history import" in holders[0]
    # simpler takes SIMPLER_HISTORY as the store when no --db names one: no URL on a command.
    assert re.search(r"\n\s+SIMPLER_HISTORY: \$\{\{ secrets\.SIMPLER_HISTORY_URL \}\}", holders[0])
    assert "--db" not in holders[0]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_no_run_script_reads_a_secret(path: Path) -> None:
    # A secret in a script is expanded into the script's text before the shell runs it: it then
    # lands on a command line. Through env it stays a variable, masked where it is printed.
    scripts = _runs(path.read_text())
    assert scripts
    leaking = [script for script in scripts if "secrets." in script or "secrets[" in script]
    assert leaking == []


def test_the_history_cache_is_restored_and_saved_only_without_a_server() -> None:
    text = CI.read_text()
    assert re.search(AS_FLAG.pattern + r"\n", text), "the summary job's HISTORY_ON_SERVER flag"
    cached = [step for step in _steps(text) if "uses: actions/cache/" in step]
    history = [step for step in cached if "path: .simpler/history.db" in step]
    durations = [step for step in cached if "path: .simpler/durations.json" in step]
    # A pull request's scene jobs read the impact maps from the cached file, never save it.
    maps = [step for step in history if "impact maps" in step]
    assert len(maps) == 1 and "cache/restore" in maps[0], maps
    assert "if: env.SIMPLER_AFFECTED_SINCE != ''" in maps[0]
    history = [step for step in history if step not in maps]
    assert len(history) == 2 and len(durations) == 2  # each restored, then saved
    for step in history:
        condition = re.search(r"\n\s+if: (.*)", step)
        assert condition and "env.HISTORY_ON_SERVER != 'true'" in condition[1], step
    # The plan job has no psycopg and no URL: it plans on the cached durations, server or not.
    assert not any("HISTORY_ON_SERVER" in step for step in durations)


def test_the_summary_job_installs_the_psycopg_the_postgres_extra_asks_on_a_server() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (extra,) = project["optional-dependencies"]["postgres"]
    installs = [step for step in _steps(CI.read_text()) if "pip install 'psycopg" in step]
    assert len(installs) == 1
    wanted = f"if [ \"$HISTORY_ON_SERVER\" = true ]; then python -m pip install '{extra}'"
    assert wanted in installs[0]


def test_an_empty_simpler_history_is_the_cached_file(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without the secret the step's SIMPLER_HISTORY is set, but empty: the cached file it is.
    monkeypatch.setenv("SIMPLER_HISTORY", "")
    assert store_ref() == str(DEFAULT_DB)


# Two runs: one of long ago, before any prune window, and one of now.
OLD, NEW = "20010909T014640-0a0a0a", "20261205T073000-1b1b1b"


def _history_step(tmp_path: Path, *, server: str) -> subprocess.CompletedProcess[str]:
    """The workflow's history step, run as the runner runs it, on the two runs' reports."""
    (step,) = [s for s in _steps(CI.read_text()) if "name: history of the runs" in s]
    (script,) = _runs(step)
    for job, run, start in (("old", OLD, 1e9), ("new", NEW, time.time())):
        (tmp_path / "reports" / job).mkdir(parents=True)
        hang_with_victims(Run(run, start), reset_fails=True).write(
            tmp_path / "reports" / job / "report.jsonl"
        )
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "simpler"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m simpler "$@"\n')
    shim.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "HISTORY_DAYS": "90",
        "HISTORY_ON_SERVER": "true" if server else "false",
        "SIMPLER_HISTORY": server,
    }
    return subprocess.run(
        ["bash", "-c", textwrap.dedent(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def _ran_as_the_summary_needs(tmp_path: Path, done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stdout + done.stderr
    assert "## Flake scores" in (tmp_path / "summary.md").read_text()
    assert (tmp_path / "reports" / "history.html").is_file()
    # The next plan's durations, where the save step takes them from.
    assert (tmp_path / ".simpler" / "durations.json").is_file()


def test_the_history_step_without_a_server_keeps_and_prunes_the_cached_file(
    tmp_path: Path,
) -> None:
    done = _history_step(tmp_path, server="")
    _ran_as_the_summary_needs(tmp_path, done)
    with closing(sqlite3.connect(tmp_path / ".simpler" / "history.db")) as db:
        assert db.execute("SELECT run_id FROM runs").fetchall() == [(NEW,)]


def test_the_history_step_on_a_server_keeps_no_file_prunes_nothing_prints_no_password(
    tmp_path: Path, postgres_url: str
) -> None:
    # The `postgres` extra's driver: a job that installs simpler without it skips this test.
    psycopg = pytest.importorskip("psycopg")
    from postgres_server import PASSWORD

    done = _history_step(tmp_path, server=postgres_url)
    _ran_as_the_summary_needs(tmp_path, done)
    assert PASSWORD not in done.stdout + done.stderr
    assert not (tmp_path / ".simpler" / "history.db").exists()
    with psycopg.connect(postgres_url) as conn:
        runs = conn.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()
    assert runs == [(OLD,), (NEW,)]
