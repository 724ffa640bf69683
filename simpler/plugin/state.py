"""What the plugin keeps per pytest session and per test, and how it writes a record."""

from __future__ import annotations

from typing import Any

import pytest

from simpler.plugin.class_progress import ClassProgress
from simpler.plugin.options import PluginSettings
from simpler.plugin.quarantine_marks import mark_test_quarantine
from simpler.plugin.test_records import AttemptTrace
from simpler.plugin.worker_pool import WorkerPool
from simpler.reporting import report_file

__all__ = [
    "ACTIVE",
    "FINISHED",
    "POOL",
    "PROGRESS",
    "SETTINGS",
    "TRACE",
    "FinishedTests",
    "is_active",
    "write_record",
]

ACTIVE = pytest.StashKey[bool]()  # asked for (simpler run, a --simpler-... option or ini key)
SETTINGS = pytest.StashKey[PluginSettings]()
POOL = pytest.StashKey[WorkerPool]()
PROGRESS = pytest.StashKey[ClassProgress]()
TRACE = pytest.StashKey[AttemptTrace]()


class FinishedTests:
    """Counts the tests a session saw end (an xdist controller: all of its workers').

    Kept per session, not per module: pytest's in-process runs (pytester) share one module.
    """

    def __init__(self) -> None:
        self.count = 0

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "teardown":
            self.count += 1


FINISHED = pytest.StashKey[FinishedTests]()


def is_active(config: pytest.Config) -> bool:
    """The plugin was asked for in this session (decided once, in ``pytest_configure``)."""
    return config.stash.get(ACTIVE, False)


def write_record(settings: PluginSettings, fields: dict[str, Any]) -> None:
    """Append one record, when this run keeps a report (outside simpler, plain pytest: none)."""
    if settings.report is not None:
        record = report_file.make_record(fields.pop("type"), **fields)
        record["phase"] = record["phase"] or (settings.phase or "")
        mark_test_quarantine(record, settings.platform)
        report_file.append(settings.report, record)
