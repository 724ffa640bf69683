"""The integration tests' own ``simpler run``: run inside an outer run, it keeps to itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

GOLDEN_SUITE = "tests/it/scenarios/scenario_golden.py"


def test_simpler_run_never_writes_into_the_outer_run(
    simpler_run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What an outer `simpler run` hands the tests it runs (the project's scene suite).
    outer = tmp_path / "outer.jsonl"
    monkeypatch.setenv("SIMPLER_RUN_ID", "outer-run")
    monkeypatch.setenv("SIMPLER_REPORT", str(outer))
    run = simpler_run.suite(GOLDEN_SUITE, device="0", options=("--phases", "l2"))
    assert run.records("test"), run.stdout[-2000:] + run.stderr[-2000:]
    assert "outer-run" not in {r["run"] for r in run.records()}
    assert not outer.exists()
