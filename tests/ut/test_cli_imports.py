"""Commands that do not touch a device never import cppyy (or numpy): they start fast."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = (
    "import sys\n"
    "from simpler.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "heavy = sorted(m for m in ('cppyy', 'numpy', 'simpler.runner.library') if m in sys.modules)\n"
    "print('HEAVY=' + ','.join(heavy))\n"
)


def _heavy_modules(*args: str) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True)
    return next(line for line in done.stdout.splitlines() if line.startswith("HEAVY="))[6:]


@pytest.fixture
def report_file(tmp_path: Path) -> str:
    path = tmp_path / "report.jsonl"
    path.write_text(
        json.dumps(
            {
                "schema": 1,
                "run": "r",
                "ts": 1.0,
                "phase": "l2",
                "type": "test",
                "nodeid": "t.py::test_a",
                "outcome": "passed",
            }
        )
        + "\n"
    )
    return str(path)


def test_report_imports_no_device_stack(report_file: str) -> None:
    assert _heavy_modules("report", "--file", report_file) == ""


def test_lifecycle_imports_no_device_stack() -> None:
    assert _heavy_modules("lifecycle", "--mermaid") == ""


def test_schedule_dry_run_imports_no_device_stack(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.json"
    jobs.write_text(json.dumps([{"label": "a", "devices": 1, "cmd": ["true"], "est_s": 1}]))
    assert _heavy_modules("schedule", "--devices", "0", "--dry-run", str(jobs)) == ""
