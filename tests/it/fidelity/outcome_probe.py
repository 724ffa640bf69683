"""A pytest plugin for the fidelity tests: each test's outcome as pytest's own hooks call it.

Loaded with ``-p outcome_probe`` into a plain pytest run; at the end it writes
``{nodeid: outcome}`` to ``$OUTCOME_PROBE_FILE``. The outcome comes from the category that
``pytest_report_teststatus`` gives each report (pytest's own words: passed, failed, error,
skipped, xfailed, xpassed), combined per test the way pytest's final line counts them; a
test with a failed subtest counts as failed.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict

import pytest

_categories: dict[str, list[str]] = defaultdict(list)
_WORST_FIRST = ("failed", "error", "xpassed", "xfailed", "skipped", "passed")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if type(report) is not pytest.TestReport:
        # A subtest's report: a failed subtest fails its test, as it fails pytest's exit status.
        if report.failed:
            _categories[report.nodeid].append("failed")
        return
    config = _config
    category = config.hook.pytest_report_teststatus(report=report, config=config)[0]
    _categories[report.nodeid].append(category)


def pytest_configure(config: pytest.Config) -> None:
    global _config
    _config = config


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get("OUTCOME_PROBE_FILE")
    if not target or hasattr(session.config, "workerinput"):
        return
    outcomes = {}
    for nodeid, categories in _categories.items():
        seen = [c for c in _WORST_FIRST if c in categories]
        outcomes[nodeid] = seen[0] if seen else "passed"
    with open(target, "w") as out:
        json.dump(outcomes, out)


_config: pytest.Config
