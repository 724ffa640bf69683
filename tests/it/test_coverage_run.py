"""One coverage of a whole run (issue 31): every process a run starts is measured and combined.

A small project whose library has one function per kind of process: the pooled L2 tests (two
files, so both xdist workers run some), the test that uses no device, a Resource child, the
Python process that child starts, and a function no test calls. Each check compares simpler's
combined XML with coverage.py run by hand on each process's share of the tests.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("coverage")

LIBRARY = """\
def pooled_a():
    return "a"


def pooled_b():
    return "b"


def pooled_c():
    return "c"


def no_device():
    return "plain"


def resource():
    return "resource"


def started_by_a_test():
    return "child"


def never_called():
    return "never"
"""

TESTS = {
    "test_pooled.py": """
        from covlib import ops

        def test_a(worker):
            worker.run("noop")
            assert ops.pooled_a() == "a"

        def test_b(worker):
            worker.run("noop")
            assert ops.pooled_b() == "b"
        """,
    "test_pooled_more.py": """
        from covlib import ops

        def test_c(worker):
            worker.run("noop")
            assert ops.pooled_c() == "c"
        """,
    "test_plain.py": """
        from covlib import ops

        def test_no_device():
            assert ops.no_device() == "plain"
        """,
    "test_resource.py": """
        import subprocess
        import sys

        import pytest

        from covlib import ops

        @pytest.mark.device_count(2)
        def test_resource():
            assert ops.resource() == "resource"
            code = "from covlib import ops; ops.started_by_a_test()"
            subprocess.run([sys.executable, "-c", code], check=True)
        """,
}

STEERING = ("SIMPLER_PLAN", "SIMPLER_JOB", "SIMPLER_REPORT", "SIMPLER_RUN_ID", "SIMPLER_HISTORY")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "covlib").mkdir(parents=True)
    (root / "covlib" / "__init__.py").write_text("")
    (root / "covlib" / "ops.py").write_text(LIBRARY)
    (root / "tests").mkdir()
    for name, body in TESTS.items():
        (root / "tests" / name).write_text(textwrap.dedent(body))
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    return root


def _env(**more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in STEERING and not k.startswith("COV")}
    return {**env, "PYTHONPATH": "", **more}


def _simpler(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "simpler", *args], cwd=root, env=_env(**env),
                          capture_output=True, text=True, timeout=600)  # fmt: skip


def _covered(xml_file: Path) -> dict[str, set[int]]:
    """Each file's lines with hits, as the XML report says."""
    lines: dict[str, set[int]] = {}
    for cls in ET.parse(xml_file).iter("class"):
        hit = {int(line.get("number", 0)) for line in cls.iter("line") if line.get("hits") != "0"}
        lines[cls.get("filename", "")] = hit
    return lines


def _by_hand(root: Path, nodeids: list[str], *, pooled: bool) -> dict[str, set[int]]:
    """coverage.py run by hand on one process's share: its tests in one pytest, the processes
    they start measured through coverage.py's own subprocess patch."""
    rc = root / "by_hand.rc"
    rc.write_text("[run]\nsource = covlib\nparallel = true\npatch = subprocess\n")
    plugin = ["--simpler-platform=a5sim", "--simpler-device=0"] if pooled else ["-p", "no:simpler"]
    subprocess.run([sys.executable, "-m", "coverage", "run", f"--rcfile={rc}", "-m", "pytest",
                    "-q", "-p", "no:xdist", *plugin, *nodeids], cwd=root, env=_env(),
                   check=True, capture_output=True, timeout=300)  # fmt: skip
    out = root / "by_hand.json"
    for step in (["combine", "-q"], ["json", "-q", "-o", str(out)]):
        subprocess.run([sys.executable, "-m", "coverage", *step, f"--rcfile={rc}"], cwd=root,
                       env=_env(), check=True, capture_output=True)  # fmt: skip
    files = json.loads(out.read_text())["files"]
    for leftover in (out, root / ".coverage"):
        leftover.unlink()
    return {path: set(data["executed_lines"]) for path, data in files.items()}


def _shares(report: Path) -> list[tuple[list[str], bool]]:
    """Which tests each process ran: per xdist worker of the L2 pass, the pass of tests that
    use no device, and each Resource child."""
    shares: dict[str, list[str]] = {}
    for line in report.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "test" and record.get("outcome") == "passed":
            process = str(record.get("worker") or record["phase"] + record["nodeid"])
            shares.setdefault(process, []).append(record["nodeid"])
    return [(ids, "/gw" in process or "/dev" in process) for process, ids in shares.items()]


def _union(parts: list[dict[str, set[int]]]) -> dict[str, set[int]]:
    union: dict[str, set[int]] = {}
    for part in parts:
        for path, lines in part.items():
            union.setdefault(path, set()).update(lines)
    return union


def test_a_run_is_one_coverage_the_union_of_what_each_process_ran(project: Path) -> None:
    report = project / ".simpler" / "report.jsonl"
    done = _simpler(project, "run", "--platform", "a5sim", "--device", "0-1", "--report",
                    str(report), "--", "tests", "--cov=covlib",
                    "--cov-report=xml:cov.xml")  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    last = done.stdout.rstrip("\n").splitlines()
    assert last[-1].startswith("simpler: 5 passed"), last[-3:]
    assert last[-2].startswith("Coverage: "), last[-3:]
    assert "(advisory)" in last[-2]
    assert sum(line.startswith("Coverage: ") for line in last) == 1
    assert "coverage lost" not in done.stdout and "coverage partial" not in done.stdout
    combined = _covered(project / "cov.xml")
    shares = _shares(report)
    assert len(shares) >= 4  # two xdist workers, the no-device pass, the Resource child
    by_hand = _union([_by_hand(project, ids, pooled=pooled) for ids, pooled in shares])
    assert combined == {path: lines for path, lines in by_hand.items() if path in combined}
    ops = combined["covlib/ops.py"]
    # The process a test started is in it; the function no test calls is not.
    assert 22 in ops and 26 not in ops
    # No child was handed pytest-cov's options: its own .coverage would overwrite the others'.
    assert not list((project / "tests").glob(".coverage*"))


def test_a_retry_after_a_hang_is_in_the_coverage_with_its_attempt(project: Path) -> None:
    report = project / ".simpler" / "report.jsonl"
    # The hang poisons its worker and its reset fails: test_b waits for a fresh process.
    faults = "hang@test_pooled.py::test_a#1,force_reset_fail"
    done = _simpler(project, "run", "--platform", "a5sim", "--device", "0-1", "--report",
                    str(report), "--cov=covlib", "--cov-context", "test", "--cov-report=",
                    "--", "tests", "--simpler-sim-fault", faults)  # fmt: skip
    assert "1 flaky" in done.stdout and "1 recovered" in done.stdout, done.stdout[-3000:]
    from coverage import CoverageData

    data = CoverageData(str(project / ".coverage"))
    data.read()
    contexts = data.measured_contexts()
    by_context = data.contexts_by_lineno(str(project / "covlib" / "ops.py"))
    data.close()  # Python 3.13 warns of an SQLite connection left to the collector
    assert "tests/test_pooled.py::test_a|attempt 2" in contexts
    assert "tests/test_pooled.py::test_b|attempt 2" in contexts
    assert "tests/test_pooled.py::test_b|attempt 2" in by_context[6]  # pooled_b, in the retry


def test_a_child_killed_at_the_job_timeout_is_named(project: Path) -> None:
    (project / "tests" / "test_resource.py").write_text(
        textwrap.dedent("""
        import threading

        import pytest

        from covlib import ops

        @pytest.mark.device_count(1)
        def test_blocks():
            ops.resource()
            threading.Event().wait()  # never set: the job timeout ends it
        """)
    )
    report = project / ".simpler" / "report.jsonl"
    done = _simpler(project, "run", "--platform", "a5sim", "--device", "0-1", "--report",
                    str(report), "--job-timeout", "20", "--cov=covlib", "--", "tests")  # fmt: skip
    assert done.returncode == 1
    named = "Resource child tests/test_resource.py::test_blocks (killed at the job timeout"
    assert f"coverage partial: {named}" in done.stdout or f"coverage lost: {named}" in done.stdout
    assert "Coverage: " in done.stdout and "1 partial" in done.stdout


def test_three_planned_jobs_in_three_checkouts_merge_to_one_runs_coverage(
    project: Path, tmp_path: Path
) -> None:
    whole = _simpler(project, "run", "--platform", "a5sim", "--device", "0-1", "--cov=covlib",
                     "--cov-report=xml:whole.xml", "--", "tests")  # fmt: skip
    assert whole.returncode == 0, whole.stdout[-2000:]
    plan = tmp_path / "plan.json"
    planned = _simpler(project, "plan", "--platform", "a5sim", "--runners", "2=runner-2",
                       "--jobs", "2=3", "--out", str(plan), "--", "tests")  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    jobs = [job["id"] for job in json.loads(plan.read_text())["jobs"]]
    assert len(jobs) == 3
    files: list[str] = []
    for job in jobs:
        checkout = tmp_path / f"checkout-{job}"
        shutil.copytree(project, checkout, ignore=shutil.ignore_patterns(".simpler", "*.xml"))
        done = _simpler(checkout, "run", "--platform", "a5sim", "--device", "0-1", "--plan",
                        str(plan), "--job", job, "--cov=covlib", "--", "tests")  # fmt: skip
        assert done.returncode == 0, done.stdout[-2000:]
        # The CI summary job downloads each job's report folder somewhere of its own.
        downloaded = tmp_path / "artifacts" / job
        shutil.copytree(checkout / ".simpler", downloaded)
        shutil.rmtree(checkout)
        files += ["--file", str(downloaded / "report.jsonl")]
    merged = _simpler(project, "report", *files, "--plan", str(plan),
                      "--cov-report", "xml:merged.xml")  # fmt: skip
    assert merged.returncode == 0, merged.stdout[-2000:]
    assert merged.stdout.rstrip("\n").splitlines()[-2].startswith("Coverage: ")
    assert _covered(project / "merged.xml") == _covered(project / "whole.xml")


def test_coverage_below_the_gate_makes_a_green_run_red_and_says_why(
    project: Path, tmp_path: Path
) -> None:
    step_summary = tmp_path / "step_summary.md"
    done = _simpler(project, "run", "--platform", "a5sim", "--device", "0-1", "--cov=covlib",
                    "--cov-fail-under", "99", "--", "tests", GITHUB_ACTIONS="true",
                    GITHUB_STEP_SUMMARY=str(step_summary))  # fmt: skip
    # Under GitHub Actions the summary is fenced with ::stop-commands::: the fence ends last.
    last = [line for line in done.stdout.splitlines() if not line.startswith("::")]
    assert done.returncode == 1
    assert last[-2].startswith("Coverage: 92.9%") and last[-2].endswith("(gate 99%)")
    assert last[-1].endswith("-> exit 1 (coverage 92.9% < 99%)"), last[-1]
    assert "Coverage: 92.9% of 14 lines in 2 files" in step_summary.read_text()


def test_the_projects_own_coverage_config_is_honoured(project: Path) -> None:
    (project / "covlib" / "skipped.py").write_text("def f():\n    return 1\n")
    (project / ".coveragerc").write_text(
        "[run]\nbranch = True\nomit = */skipped.py\n"
        "[report]\nexclude_lines =\n    def never_called\n"
    )
    done = _simpler(project, "run", "--platform", "a5sim", "--device", "0-1", "--cov=covlib",
                    "--cov-report=xml:cov.xml", "--", "tests")  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    assert "Coverage: 100.0% of 12 lines in 2 files" in done.stdout
    root = ET.parse(project / "cov.xml").getroot()
    assert root.get("branch-rate") is not None and root.get("branches-valid") is not None
    assert "covlib/skipped.py" not in _covered(project / "cov.xml")


def test_the_scene_suite_under_cov_ends_with_one_coverage_line_of_every_process(
    tmp_path: Path,
) -> None:
    root = Path(__file__).resolve().parents[2]
    config = tmp_path / "coveragerc"  # the combined data goes here, not into the checkout
    config.write_text(f"[run]\ndata_file = {tmp_path / '.coverage'}\n")
    done = subprocess.run(
        [sys.executable, "-m", "simpler", "run", "--platform", "a5sim", "--device", "0-1",
         "--report", str(tmp_path / "report.jsonl"), "--cov=simpler", "--cov-report=",
         "--cov-config", str(config), "--", "tests/st"],
        cwd=root, env=_env(), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    last = done.stdout.rstrip("\n").splitlines()
    assert sum(line.startswith("Coverage: ") for line in last) == 1
    assert last[-2].startswith("Coverage: ") and "coverage lost" not in done.stdout
    # The L2 pass's two xdist workers (not their controller: it runs no test) and the three
    # Resource children at least.
    assert int(last[-2].split(" processes combined")[0].rsplit(" ", 1)[-1]) >= 5
    assert (tmp_path / ".coverage").is_file()
