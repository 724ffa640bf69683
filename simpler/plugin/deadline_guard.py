"""A test process under ``--deadline``: no test starts that its learned duration says cannot
end before the run's tests must be over. A test held back gets no report and no record; the
summary counts it as not run from the run's plan and names the deadline."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest

from simpler.base.nodeids import file_of
from simpler.contract.child import ChildDeadline
from simpler.plugin.options import PluginSettings
from simpler.plugin.state import write_new
from simpler.reporting.records import SessionRecord
from simpler.scheduler.durations import load_durations

__all__ = ["DeadlineGuard"]


class DeadlineGuard:
    """The guard of a process the run started under a deadline (``told``); ``settings`` say
    where to tell what it held back."""

    def __init__(self, told: ChildDeadline, settings: PluginSettings) -> None:
        self.ends_at = told.tests_end_at
        self._learned = load_durations(Path(told.durations)) if told.durations else {}
        self.settings = settings
        self._per_test: dict[str, float] = {}  # file -> its learned seconds per test
        self.held_back = 0

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # L2 durations are learned per file: each of its tests takes its share.
        tests = Counter(file_of(item.nodeid) for item in session.items)
        for path, count in tests.items():
            self._per_test[path] = self._learned.get(f"file:{path}", 0.0) / count

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        # The orchestrator learns from this that the deadline cut the phase.
        if self.held_back:
            write_new(self.settings, SessionRecord, deadline_held_back=self.held_back)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> bool | None:
        estimate = self._learned.get(item.nodeid) or self._per_test.get(file_of(item.nodeid), 0.0)
        if time.time() + estimate <= self.ends_at:
            return None
        self.held_back += 1
        return True  # not run: no report, no record
