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
from simpler.reporting.records import Record, RecordOrigin

__all__ = [
    "ACTIVE",
    "FINISHED",
    "POOL",
    "PROGRESS",
    "SETTINGS",
    "TRACE",
    "FinishedTests",
    "is_active",
    "nested_session",
    "record_origin",
    "session_ended",
    "session_started",
    "write_new",
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

# The active sessions of this process, outermost first. A session pytester runs in a test of
# an active one is nested: the outer run's environment asked for the outer session only.
_in_flight: list[pytest.Config] = []


def nested_session(config: pytest.Config) -> bool:
    """An active session of this process other than ``config`` is in flight."""
    return any(other is not config for other in _in_flight)


def session_started(config: pytest.Config) -> None:
    _in_flight.append(config)


def session_ended(config: pytest.Config) -> None:
    if config in _in_flight:
        _in_flight.remove(config)


def is_active(config: pytest.Config) -> bool:
    """The plugin was asked for in this session (decided once, in ``pytest_configure``)."""
    return config.stash.get(ACTIVE, False)


def write_record(settings: PluginSettings, record: Record) -> None:
    """Append ``record``, when this run keeps a report (outside simpler, plain pytest: none)."""
    if settings.report is not None:
        marked = mark_test_quarantine(record, settings.platform, settings.told.quarantine)
        report_file.write_record(settings.report, marked)


def write_new(settings: PluginSettings, kind: type[Record], **fields: Any) -> None:
    """Append a new record of ``kind`` from this process, when this run keeps a report."""
    if settings.report is not None:
        write_record(settings, record_origin(settings).build(kind, **fields))


def record_origin(settings: PluginSettings) -> RecordOrigin:
    """The run and phase of this process's records: as simpler run told this process."""
    return RecordOrigin(settings.told.run_id, settings.told.phase)
