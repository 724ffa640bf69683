"""Integration tests drive ``simpler run`` as a user would, in a process of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
from processes import SimplerRunner

SCENARIOS = "tests/it/scenarios"
# Scenario files are named scenario_*.py so that the project's own run never collects them.


@pytest.fixture
def simpler_run(tmp_path: Path) -> SimplerRunner:
    """``simpler_run(*args)``, ``.suite(*pytest_args)``, ``.interrupt(...)``: each run to its end
    in a process of its own, its report in this test's tmp_path (tests/it/processes.py)."""
    return SimplerRunner(tmp_path)
