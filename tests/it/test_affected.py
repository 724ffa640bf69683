"""Per-test selection end to end, as a user meets it: ``simpler run --impact-map`` keeps the
map of HEAD in the history, then ``simpler affected`` after a change selects exactly the
tests that ran the changed code, each with its reason; a docs-only change selects none and
says so; what the map cannot see runs everything and names why."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from calc_project import CALC_PACKAGE

from simpler.reporting.report_file import read

FILES = {
    **CALC_PACKAGE,
    "tests/test_calc.py": """
        from pathlib import Path

        from pkg.calc import double, triple


        def test_double():
            expected = (Path(__file__).parent / "expected.txt").read_text()
            assert double(2) == int(expected)


        def test_triple():
            assert triple(2) == 6
        """,
    "tests/test_card.py": """
        from pkg.calc import double


        def test_on_the_card(worker):
            import numpy as np

            out = worker.run("vector_add", np.ones(4, np.float32), np.ones(4, np.float32))
            assert (out == 2).all() and double(1) == 2
        """,
    "tests/expected.txt": "4\n",
    # A data file the project calls non-code: a change to it is one the map cannot see.
    "pyproject.toml": "[tool.simpler.affected]\nnon_code = ['docs/**', '*.md', '*.txt']\n",
}
DOUBLE, TRIPLE = "tests/test_calc.py::test_double", "tests/test_calc.py::test_triple"
CARD = "tests/test_card.py::test_on_the_card"


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def project(tmp_path: Path, simpler_run: Any) -> Path:
    root = tmp_path / "project"
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    built = simpler_run.suite("tests", device="0", options=("--impact-map",), cwd=root)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    assert f"impact map of {_git(root, 'rev-parse', 'HEAD')[:10]}: 3 tests" in built.stdout
    return root


def _affected(simpler_run: Any, root: Path, *extra: str) -> dict[str, Any]:
    done = simpler_run("affected", "HEAD", "--format", "json", *extra, "--", "tests", cwd=root)
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def _run_since_head(simpler_run: Any, root: Path, *extra: str) -> Any:
    options = ("--affected-since", "HEAD", *extra)
    return simpler_run.suite("tests", device="0", options=options, cwd=root)


def _edit_calc(root: Path, old: str, new: str) -> None:
    calc = root / "pkg" / "calc.py"
    calc.write_text(calc.read_text().replace(old, new))


def _selected(document: dict[str, Any]) -> dict[str, list[str]]:
    return {t["nodeid"]: t["reasons"] for t in document["tests"] if t["selected"]}


def test_a_changed_body_selects_exactly_the_tests_that_ran_it(
    simpler_run: Any, project: Path
) -> None:
    _edit_calc(project, "return x * 2", "return x + x")
    document = _affected(simpler_run, project)
    assert document["run_all"] is None and document["commits_back"] == 0
    assert _selected(document) == {
        DOUBLE: ["ran changed block pkg/calc.py::double"],
        CARD: ["ran changed block pkg/calc.py::double"],
    }
    text = simpler_run("affected", "HEAD", "--", "tests", cwd=project).stdout
    assert text.startswith("affected since HEAD (map of ") and "2 of 3 tests selected" in text
    every = simpler_run("affected", "HEAD", "-v", "--", "tests", cwd=project).stdout
    assert f"selected  {DOUBLE}: ran changed block pkg/calc.py::double\n" in every
    assert f"left out  {TRIPLE}: no changed block, file, conftest or kernel touched it" in every
    why = simpler_run("affected", "HEAD", "--explain", TRIPLE, "--", "tests", cwd=project)
    assert why.stdout.strip() == (
        f"{TRIPLE}: left out: no changed block, file, conftest or kernel touched it"
    )


def test_a_docs_only_change_selects_none_and_says_so(simpler_run: Any, project: Path) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "guide.md").write_text("# guide\n")
    done = simpler_run("affected", "HEAD", "--", "tests", cwd=project)
    assert done.stdout.strip().endswith(
        "0 of 3 tests selected: every changed file is non-code (docs/guide.md)"
    )


@pytest.mark.parametrize(
    ("path", "text", "rule"),
    [
        ("pyproject.toml", "[project]\nname = 'x'\n",
         "pyproject.toml changed: the map has no account of it"),
        ("native/card.cpp", "int x;\n",
         "native/card.cpp changed: C/C++ that no kernel in the map was built from"),
        ("pkg/calc.py", "LIMIT = 1\n",
         "pkg/calc.py changed import-time code the map cannot attribute"),
    ],
)  # fmt: skip
def test_what_the_map_cannot_see_runs_everything_and_names_why(
    simpler_run: Any, project: Path, path: str, text: str, rule: str
) -> None:
    target = project / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text if path != "pkg/calc.py" else target.read_text() + text)
    document = _affected(simpler_run, project)
    assert document["run_all"] == rule
    assert sorted(_selected(document)) == sorted([DOUBLE, TRIPLE, CARD])


def test_no_map_runs_everything_and_names_why(simpler_run: Any, project: Path) -> None:
    empty = project / "elsewhere.db"
    document = _affected(simpler_run, project, "--history", str(empty))
    assert document["run_all"] == f"no history at {empty}: no impact map"


def test_a_revision_that_is_not_a_commit_is_one_line_and_exit_2(
    simpler_run: Any, project: Path
) -> None:
    done = simpler_run("affected", "no-such-branch", "--", "tests", cwd=project)
    assert done.returncode == 2
    assert done.stderr.strip() == "error: simpler affected: no-such-branch is not a commit here"


def test_a_run_affected_since_runs_only_the_selected_tests_and_keeps_their_reasons(
    simpler_run: Any, project: Path
) -> None:
    _edit_calc(project, "return x * 3", "return x + x + x")
    done = _run_since_head(simpler_run, project)
    assert done.returncode == 0, done.stdout[-2000:]
    assert {r["nodeid"] for r in done.records("test")} == {TRIPLE}
    (start,) = done.records("phase", event="start", phase="l2")
    assert start["planned"] == [TRIPLE]
    assert start["affected"]["reasons"] == {TRIPLE: ["ran changed block pkg/calc.py::triple"]}
    assert "affected since HEAD (map of " in done.stdout and "1 of 3 tests selected" in done.stdout
    reason = f"selected  {TRIPLE}: ran changed block pkg/calc.py::triple"
    assert reason not in done.stdout  # each test's reasons: in the report, and with -v
    told = simpler_run.suite("tests", "-v", device="0", options=("--affected-since", "HEAD"),
                             cwd=project)  # fmt: skip
    assert told.returncode == 0 and reason in told.stdout, told.stdout[-2000:]
    assert (
        f"left out  {DOUBLE}: no changed block, file, conftest or kernel touched it" in told.stdout
    )


def test_a_run_of_a_non_code_change_runs_nothing_green_and_says_so(
    simpler_run: Any, project: Path
) -> None:
    (project / "CHANGES.md").write_text("- nothing yet\n")
    done = _run_since_head(simpler_run, project, "--fail-if-nothing-ran")
    assert done.returncode == 0
    assert (
        done.stdout.rstrip()
        .splitlines()[-1]
        .endswith("0 of 3 tests selected: every changed file is non-code (CHANGES.md) -> exit 0")
    )
    assert done.records("test") == []
    # The report keeps the decision: CI's summary over every job reads it as deliberate.
    (start,) = done.records("phase", event="start", phase="l2")
    assert start["planned"] == [] and start["selected"] == 3
    assert start["affected"]["non_code"] == ["CHANGES.md"]
    report = simpler_run("report", "--file", str(done.report), "--fail-if-nothing-ran")
    assert report.returncode == 0, report.stdout[-2000:]
    assert "0 of 3 tests selected" in report.stdout


def test_a_run_whose_change_the_map_cannot_see_runs_everything(
    simpler_run: Any, project: Path
) -> None:
    (project / "setup.cfg").write_text("[metadata]\nname = x\n")
    done = _run_since_head(simpler_run, project)
    assert done.returncode == 0
    assert {r["nodeid"] for r in done.records("test")} == {DOUBLE, TRIPLE, CARD}
    assert "everything runs (setup.cfg changed: the map has no account of it)" in done.stdout


def test_shadow_mode_runs_everything_and_names_the_failure_the_selection_would_miss(
    simpler_run: Any, project: Path
) -> None:
    """... in the summary, and in the history: the decision kept with the run, the miss rate
    counted from its verdicts and shown on the history's page."""
    from contextlib import closing

    from simpler.history.shadow_misses import shadow_misses
    from simpler.history.store import open_store

    history = project / ".simpler" / "history.db"  # the map's, and now the run's too
    (project / "tests" / "expected.txt").write_text("5\n")  # non-code to the rules: a miss
    done = _run_since_head(simpler_run, project, "--affected-shadow", "--history", str(history))
    assert done.returncode == 1, done.stderr[-2000:]
    assert {r["nodeid"] for r in done.records("test")} == {DOUBLE, TRIPLE, CARD}
    assert (
        "affected shadow: the selection would have missed 1 of 1 failure(s):\n"
        f"  {DOUBLE}\n" in done.stdout
    )
    assert "0 of 3 tests selected (shadow: everything ran)" in done.stdout
    (start,) = done.records("phase", event="start", phase="l2")
    with closing(open_store(str(history))) as conn:
        kept = conn.execute("SELECT run_id, since, run_all, selected, tests FROM affected_runs")
        assert kept.fetchall() == [(start["run"], "HEAD", None, 0, 3)]
        misses = shadow_misses(conn)
    assert (misses.runs, misses.failures, misses.missed) == (1, 1, 1)
    assert misses.newest == ((start["run"], DOUBLE),)
    page = project / "history.html"
    shown = simpler_run("history", "html", str(page), "--db", str(history), cwd=project)
    assert shown.returncode == 0, shown.stderr
    assert "missed 1 of 1 failure(s) over 1 shadow run(s) (100%)" in page.read_text()


def _split_jobs(
    simpler_run: Any, project: Path, tmp_path: Path, split: str
) -> list[tuple[str, ...]]:
    """Each job's options: two shards, or the three jobs of a plan (`simpler plan`)."""
    if split == "shards":
        return [("--shard", f"{index}/2") for index in (1, 2)]
    # A third file: a plan's unit is a file (or a device test), and three jobs need three.
    (project / "tests" / "test_more.py").write_text(
        "from pkg.calc import triple\n\n\ndef test_more():\n    assert triple(1) == 3\n"
    )
    _git(project, "add", "-A")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "more")
    plan = tmp_path / "plan.json"
    planned = simpler_run("plan", "--platform", "a5sim", "--runners", "1=runner-1", "--jobs",
                          "1=3", "--out", str(plan), "--", "tests", cwd=project)  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    jobs = [job["id"] for job in json.loads(plan.read_text())["jobs"]]
    assert len(jobs) == 3, jobs
    return [("--plan", str(plan), "--job", job) for job in jobs]


@pytest.mark.parametrize("split", ["shards", "plan"])
def test_the_map_of_split_jobs_imported_with_their_reports_equals_one_runs(
    simpler_run: Any, project: Path, tmp_path: Path, split: str
) -> None:
    """Two shards, or three planned jobs, each its own job (its own history), their reports
    imported into one history by `simpler history import`, as CI's summary job does: one map,
    the full run's."""
    from contextlib import closing

    from simpler.history.store import open_store
    from simpler.impact.store import Environment, load_map

    jobs = _split_jobs(simpler_run, project, tmp_path, split)
    whole = tmp_path / "whole"  # one run of the commit the jobs run at, in a history of its own
    options = ("--impact-map", "--report", str(whole / "r.jsonl"), "--history", str(whole / "h.db"))
    assert simpler_run.suite("tests", device="0", options=options, cwd=project).returncode == 0
    reports = []
    for index, job_options in enumerate(jobs):
        job = tmp_path / f"job{index}"
        options = ("--impact-map", *job_options, "--report", str(job / "r.jsonl"),
                   "--history", str(job / "h.db"))  # fmt: skip
        done = simpler_run.suite("tests", device="0", options=options, cwd=project)
        assert done.returncode == 0, done.stdout[-2000:]
        reports.append(str(job / "r.jsonl"))
    merged = tmp_path / "merged.db"
    imported = simpler_run("history", "import", *reports, "--db", str(merged), cwd=project)
    assert imported.returncode == 0, imported.stderr
    assert f"{len(reports)} impact map(s)" in imported.stdout, imported.stdout
    head = _git(project, "rev-parse", "HEAD")
    with closing(open_store(str(merged))) as conn:
        from_jobs = load_map(conn, head, Environment.here())
    with closing(open_store(str(whole / "h.db"))) as conn:
        one_run = load_map(conn, head, Environment.here())
    assert from_jobs is not None and from_jobs == one_run
    assert len(from_jobs.tests) == (3 if split == "shards" else 4)


def test_a_shard_whose_share_of_the_selection_is_empty_still_reports_and_is_green(
    simpler_run: Any, project: Path, tmp_path: Path
) -> None:
    """One test selected, two shards: one shard runs it, the other has nothing to run and
    says so in its report, so that the summary over both counts both jobs and is green."""
    _edit_calc(project, "return x * 3", "return x + x + x")
    reports = []
    for index in (1, 2):
        report = tmp_path / f"shard{index}.jsonl"
        options = ("--affected-since", "HEAD", "--shard", f"{index}/2", "--report", str(report))
        done = simpler_run.suite("tests", device="0", options=options, cwd=project)
        assert done.returncode == 0, done.stdout[-2000:]
        reports.append(report)
    shards = {}
    for report in reports:
        starts = [r for r in read(report) if r["type"] == "phase" and r["event"] == "start"]
        shards[starts[0]["shard"]] = sorted(n for s in starts for n in s.get("planned", []))
    assert sorted(shards.values()) == [[], [TRIPLE]], shards
    files = [arg for report in reports for arg in ("--file", str(report))]
    merged = simpler_run("report", *files, "--fail-if-nothing-ran", cwd=project)
    assert merged.returncode == 0, merged.stdout[-2000:]
    assert "1 passed" in merged.stdout


CHILD_AND_NESTED = {
    # Code a test runs in a process of its own is that test's (the process is measured with
    # the test's context), and so is code a pytest session nested in a test runs.
    "tests/test_child.py": """
        import subprocess
        import sys


        def test_in_a_child_process():
            code = "from pkg.calc import triple; assert triple(2) == 6"
            subprocess.run([sys.executable, "-c", code], check=True)
        """,
    "tests/test_nested.py": """
        pytest_plugins = ["pytester"]


        def test_in_a_nested_session(pytester):
            pytester.makepyfile(test_inner='''
                from pkg.calc import triple


                def test_inner():
                    assert triple(3) == 9


                def test_inner_fails_on_purpose():
                    assert triple(3) == 10
                ''')
            inner = pytester.runpytest_inprocess("-p", "no:cacheprovider")
            inner.assert_outcomes(passed=1, failed=1)
        """,
}
CHILD = "tests/test_child.py::test_in_a_child_process"
NESTED = "tests/test_nested.py::test_in_a_nested_session"


def test_code_a_test_runs_in_a_child_process_or_a_nested_session_is_that_tests(
    simpler_run: Any, project: Path
) -> None:
    for name, text in CHILD_AND_NESTED.items():
        (project / name).write_text(textwrap.dedent(text))
    _git(project, "add", "-A")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "more")
    built = simpler_run.suite("tests", device="0", options=("--impact-map",), cwd=project)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-2000:]
    # The nested session is no test of the run: pytest's verdicts, the map's tests, the suite's.
    assert built.stdout.rstrip().endswith("5 passed, 0 recovered, 0 flaky, 0 failed -> exit 0")
    assert {r["nodeid"] for r in built.records("test")} == {DOUBLE, TRIPLE, CARD, CHILD, NESTED}
    assert ": 5 tests, " in built.stdout
    _edit_calc(project, "return x * 3", "return x + x + x")
    assert _selected(_affected(simpler_run, project)) == {
        TRIPLE: ["ran changed block pkg/calc.py::triple"],
        CHILD: ["ran changed block pkg/calc.py::triple"],
        NESTED: ["ran changed block pkg/calc.py::triple"],
    }
