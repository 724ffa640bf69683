"""pytest's own verdict for every test: the same suite under plain pytest and ``simpler run``
agrees test by test and on the exit code, and pytest's own reporting still works."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from simpler.reporting.report_file import read_records
from simpler.reporting.summary import summarize

ROOT = Path(__file__).resolve().parents[2]
FIDELITY = ROOT / "tests" / "it" / "fidelity"
EDGE_SUITE = "tests/it/fidelity/scenario_edge_outcomes.py"


def plain_pytest(tmp_path: Path, *args: str, cwd: Path = ROOT) -> tuple[int, dict[str, str]]:
    """pytest alone (simpler's plugin stays inactive), with the outcome probe listening."""
    probe = tmp_path / "plain-outcomes.json"
    path = os.pathsep.join(filter(None, [str(FIDELITY), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "OUTCOME_PROBE_FILE": str(probe), "PYTHONPATH": path}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "outcome_probe", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    outcomes = json.loads(probe.read_text()) if probe.exists() else {}
    return done.returncode, outcomes


def simpler_verdicts(run: Any) -> dict[str, str]:
    summary = summarize(read_records(run.report).records)
    return {nodeid: verdict.outcome for nodeid, verdict in summary.verdicts.items()}


def test_the_edge_outcomes_agree_with_plain_pytest(simpler_run: Any, tmp_path: Path) -> None:
    plain_rc, plain = plain_pytest(tmp_path, EDGE_SUITE, "-ra")
    run = simpler_run("run", "--platform", "a5sim", "--device", "0", "--", EDGE_SUITE, "-ra")
    assert plain and simpler_verdicts(run) == plain
    assert run.returncode == plain_rc == 1
    # pytest's own short summary and final line survive in the L2 output.
    assert f"XFAIL {EDGE_SUITE}::test_xfail - known bug" in run.stdout
    assert f"XPASS {EDGE_SUITE}::test_xpass - maybe fixed" in run.stdout
    assert "3 xfailed, 1 xpassed" in run.stdout


def test_messages_name_setup_and_teardown_errors_as_pytest_does(simpler_run: Any) -> None:
    run = simpler_run("run", "--platform", "a5sim", "--device", "0", "--", EDGE_SUITE)
    records = {r["nodeid"].rsplit("::", 1)[-1]: r for r in run.records("test", phase="l2")}
    assert records["test_setup_error"]["message"] == "RuntimeError: setup boom"
    assert records["test_teardown_error"]["message"] == "RuntimeError: teardown boom"
    both = records["test_fail_and_teardown_error"]["message"]
    assert both.startswith("AssertionError: call boom") and "teardown: RuntimeError" in both
    # One verdict per test (pytest's own line counts a failed test's teardown error again).
    assert run.stdout.rstrip().splitlines()[-1] == (
        "simpler: 2 passed, 0 recovered, 0 flaky, 5 failed, 2 errors, 2 skipped, 3 xfailed, "
        "1 xpassed -> exit 1"
    )


def test_an_empty_selection_is_pytest_s_exit_5(simpler_run: Any, tmp_path: Path) -> None:
    plain_rc, _ = plain_pytest(tmp_path, EDGE_SUITE, "-k", "no_such_test")
    run = simpler_run(
        "run", "--platform", "a5sim", "--device", "0", "--", EDGE_SUITE, "-k", "no_such_test"
    )
    assert plain_rc == run.returncode == 5
    last = run.stdout.rstrip().splitlines()[-1]
    assert last == "simpler: nothing ran: no test selected -> exit 5"


# Real suites from pinned sdists: transitions (its ini says -x -rf, and one of its tests
# fails outside its own CI: a red suite cut short) and more-itertools (green, with
# thousands of unittest subtests).
THIRD_PARTY = {
    "transitions": "0.9.3",
    "more-itertools": "10.5.0",
}


@pytest.fixture(scope="session")
def third_party_sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each pinned sdist, downloaded from the package index and unpacked once per session."""
    folder = tmp_path_factory.mktemp("sdists")
    pins = [f"{name}=={version}" for name, version in THIRD_PARTY.items()]
    download = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
    done = subprocess.run(
        [*download, "-d", str(folder), *pins], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"cannot download the pinned sdists: {done.stderr[-2000:]}"
    sources = {}
    for name, version in THIRD_PARTY.items():
        archive = next(folder.glob(f"{name.replace('-', '[-_]')}-{version}.tar.gz"))
        with tarfile.open(archive) as sdist:
            sdist.extractall(folder, filter="data")
        sources[name] = folder / archive.name.removesuffix(".tar.gz")
    return sources


@pytest.mark.parametrize("project", sorted(THIRD_PARTY))
def test_a_third_party_suite_agrees_with_plain_pytest(
    project: str, third_party_sources: dict[str, Path], tmp_path: Path, simpler_run: Any
) -> None:
    source = third_party_sources[project]
    plain_rc, plain = plain_pytest(tmp_path, "tests", cwd=source)
    run = simpler_run(
        "run", "--platform", "a5sim", "--device", "0-1", "--", "tests", cwd=source, timeout=600
    )
    assert len(plain) > 100
    assert simpler_verdicts(run) == plain
    assert run.returncode == plain_rc, run.stdout[-3000:]
