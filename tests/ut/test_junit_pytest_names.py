"""simpler's JUnit names every test as ``pytest --junitxml`` does, and stays Surefire-valid.

The same scenario files (module-level tests, classes, a nested class, parameters with ``::``
and brackets, Resource-phase tests, a folder one level down) run under plain pytest and under
``simpler run``; both JUnit files must hold the same testcases with the same kind of outcome.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from surefire_schema import surefire_violations

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = "tests/it/fidelity/junit_names"
FILES = (f"{SCENARIO}/scenario_junit_names.py", f"{SCENARIO}/deeper/scenario_junit_deeper.py")


def outcomes(path: Path) -> dict[tuple[str, str], str]:
    """``(classname, name)`` -> the testcase's outcome: passed, failure, error, skipped:TYPE."""
    found: dict[tuple[str, str], str] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        kinds = [
            f"skipped:{child.get('type')}" if child.tag == "skipped" else child.tag
            for child in case
            if child.tag in ("failure", "error", "skipped")
        ]
        key = (case.get("classname") or "", case.get("name") or "")
        assert key not in found, f"{key} named twice"
        found[key] = "+".join(kinds) or "passed"
    return found


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SIMPLER_OP_TIMEOUT_MS": "150"}
    return subprocess.run(
        [sys.executable, "-m", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_simpler_names_and_outcomes_match_pytest_s_own_junit(tmp_path: Path) -> None:
    plain_xml, simpler_xml = tmp_path / "pytest.xml", tmp_path / "simpler.xml"
    plain = run(["pytest", f"--junitxml={plain_xml}", *FILES])
    assert plain.returncode == 1, plain.stdout[-2000:]
    simpler = run(
        ["simpler", "run", "--report", str(tmp_path / "report.jsonl"), "--platform", "a5sim",
         "--device", "0", "--junit", str(simpler_xml), "--", *FILES]
    )  # fmt: skip
    assert simpler.returncode == 1, simpler.stdout[-2000:] + simpler.stderr[-2000:]
    expected = outcomes(plain_xml)
    assert expected[("tests.it.fidelity.junit_names.scenario_junit_names", "test_params[a::b]")]
    assert expected[
        ("tests.it.fidelity.junit_names.scenario_junit_names.TestOnDevices", "test_in_a_class")
    ]  # a Resource-phase test: run in a child by simpler
    assert sorted(set(expected.values())) == [
        "error", "failure", "passed", "skipped:pytest.skip", "skipped:pytest.xfail",
    ]  # fmt: skip
    assert outcomes(simpler_xml) == expected
    assert surefire_violations(simpler_xml) == []
    times = [case.get("time") or "" for case in ET.parse(simpler_xml).getroot().iter("testcase")]
    assert all(len(time.partition(".")[2]) == 3 for time in times)
