"""Integration tests drive ``simpler run`` as a user would, in a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from simpler import report

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = "tests/it/scenarios"
# Scenario files are named scenario_*.py so that the project's own run never collects them.


@dataclass
class SimplerRun:
    returncode: int
    stdout: str
    stderr: str
    report: Path

    def records(self, record_type: str | None = None, **match: Any) -> list[dict[str, Any]]:
        if not self.report.exists():
            return []
        return [
            r
            for r in report.read(self.report)
            if (record_type is None or r["type"] == record_type)
            and all(r.get(k) == v for k, v in match.items())
        ]

    def outcomes(self, phase: str) -> dict[str, str]:
        return {r["nodeid"]: r["outcome"] for r in self.records("test", phase=phase)}


@pytest.fixture
def simpler_run(tmp_path: Path) -> Any:
    counter = iter(range(1000))

    def run(
        *args: str,
        env: dict[str, str] | None = None,
        timeout: float = 300,
        cwd: Path = ROOT,
    ) -> SimplerRun:
        path = tmp_path / f"report-{next(counter)}.jsonl"
        argv = [sys.executable, "-m", "simpler", *_with_report(list(args), path)]
        child = subprocess.run(
            argv,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "SIMPLER_OP_TIMEOUT_MS": "150", **(env or {})},
        )
        return SimplerRun(child.returncode, child.stdout, child.stderr, path)

    return run


def _with_report(args: list[str], path: Path) -> list[str]:
    if args and args[0] == "run" and "--report" not in args:
        return [args[0], "--report", str(path), *args[1:]]
    return args
