"""pytest's internal error (exit 3: a config warning under ``filterwarnings = error``, a
project hook that raises) is no failed test: the run stops where pytest stopped, says
pytest's own reason, counts no test as failed and exits 3, as pytest does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simpler.orchestrator.collection import internal_error_reason

TESTS = "def test_a():\n    pass\n\n\ndef test_b():\n    pass\n"
# Raises only when the tests are to run: the up-front collection passes, the L2 phase meets it.
RAISES_IN_THE_RUN = """
def pytest_collection_finish(session):
    if not session.config.option.collectonly:
        raise RuntimeError("the project's collection hook failed")
"""


def _project(root: Path, ini: str, conftest: str = "") -> Path:
    (root / "tests").mkdir()
    (root / "tests" / "test_a.py").write_text(TESTS)
    (root / "tests" / "conftest.py").write_text(conftest)
    (root / "pytest.ini").write_text(ini)
    return root


def test_a_config_error_stops_the_run_before_any_phase_with_pytests_reason(
    simpler_run: Any, tmp_path: Path
) -> None:
    root = _project(tmp_path, "[pytest]\nfilterwarnings = error\nno_such_plugin_option = 5\n")
    done = simpler_run.suite("tests", device="0", cwd=root)
    assert done.returncode == 3
    assert done.stderr.strip() == (
        "error: simpler run: pytest stopped with an internal error collecting the suite: "
        "PytestConfigWarning: Unknown config option: no_such_plugin_option"
    )
    assert done.records("phase") == [] and done.records("test") == []


def test_an_internal_error_in_a_phase_counts_no_failed_test_and_exits_3(
    simpler_run: Any, tmp_path: Path
) -> None:
    root = _project(tmp_path, "[pytest]\n", RAISES_IN_THE_RUN)
    done = simpler_run.suite("tests", device="0", cwd=root)
    assert done.returncode == 3
    assert "INTERNALERROR> RuntimeError: the project's collection hook failed" in done.stdout
    last = done.stdout.rstrip().splitlines()[-1]
    assert last == (
        "simpler: 0 passed, 0 recovered, 0 flaky, 0 failed, 2 not run -> exit 3 "
        "(infrastructure failure in phase l2)"
    )
    again = simpler_run("report", "--file", str(done.report))
    assert again.returncode == 3 and again.stdout.rstrip().splitlines()[-1] == last


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        (["INTERNALERROR> Traceback", "INTERNALERROR> pytest.PytestConfigWarning: Unknown x",
          "", "no tests ran"], "PytestConfigWarning: Unknown x"),
        (["INTERNALERROR> RuntimeError: boom: again", "INTERNALERROR>"],
         "RuntimeError: boom: again"),
        (["INTERNALERROR> not an exception line"], "not an exception line"),
        (["no marker at all", "last words"], "last words"),
    ],
)  # fmt: skip
def test_the_reason_is_pytests_last_internal_error_line(output: list[str], reason: str) -> None:
    assert internal_error_reason(output) == reason
