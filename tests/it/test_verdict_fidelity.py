"""pytest's own verdict for every test: the same suite under plain pytest and ``simpler run``
agrees test by test and on the exit code, and pytest's own reporting still works."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from simpler import report
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
    summary = summarize(report.read(run.report))
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
    assert "no tests ran" in run.stdout
