"""What a measured pytest process does: say who it is, name each test's lines, save as it goes.

A plugin of a process coverage.py already measures (``process_env``): a ``process`` record
when it starts; under ``--cov-context test``, each test's lines as ``nodeid|run`` (or
``nodeid|attempt N``); a save after every test unless ``SIMPLER_COV_SAVE`` says otherwise
(docs/coverage.md, "Where the data goes").
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import TYPE_CHECKING

import pytest

from simpler.contract.child import COV_WORKERS_ENV, COVERAGE_CONFIG_ENV, ChildCoverage
from simpler.contract.settings import COV_SAVE_ENV
from simpler.coverage.process_env import worker_label
from simpler.reporting.records import CoverageRecord, RecordOrigin

if TYPE_CHECKING:
    from coverage import Coverage

__all__ = ["ProcessCoverage", "hand_to_workers"]

SAVE_POINTS = ("test", "file", "exit")


def hand_to_workers(told: ChildCoverage | None, *, distributes: bool) -> None:
    """An xdist controller of a measured run (``told`` its workers' config): its workers
    (started after this, with its environment) measure themselves; it runs no test and is not
    measured. One that does not distribute after all (``-n 0`` somewhere) runs the tests
    itself: it measures itself from here on."""
    if told is None or not told.workers_only:
        return
    os.environ.pop(COV_WORKERS_ENV, None)
    os.environ[COVERAGE_CONFIG_ENV] = told.config
    if not distributes:
        import coverage

        coverage.process_startup(force=True)


# The context of the test this process is running, when one is: a pytest session a test
# runs in this process (pytester) must not take the outer test's lines as its own.
_test_context: list[str] = []


def _hand_context_to_children(context: str) -> str | None:
    """A process the test starts (a subprocess, a ``python -c``) inherits coverage.py's
    ``COVERAGE_PROCESS_CONFIG`` and is measured: given the test's context as its static
    context, its lines are the test's too, not the empty context's. The config it had."""
    handed = os.environ.get(COVERAGE_CONFIG_ENV)
    if handed is None:
        return None
    from coverage.config import CoverageConfig

    config = CoverageConfig.deserialize(handed)
    config.context = context
    os.environ[COVERAGE_CONFIG_ENV] = config.serialize()
    return handed


def _restore_children_config(handed: str | None) -> None:
    if handed is not None:
        os.environ[COVERAGE_CONFIG_ENV] = handed


class ProcessCoverage:
    """The coverage of this process, seen from pytest."""

    def __init__(self, cov: Coverage, label: str, *, attempt: int, contexts: bool) -> None:
        self._cov = cov
        self.label = label
        self._attempt = attempt
        self._contexts = contexts
        chosen = os.environ.get(COV_SAVE_ENV, "test")
        self._save_at = chosen if chosen in SAVE_POINTS else "test"

    @classmethod
    def here(
        cls, told: ChildCoverage | None, *, worker: str | None, attempt: int
    ) -> ProcessCoverage | None:
        """This process's coverage when a measured run started it (``told``); None otherwise."""
        if told is None:
            return None
        from coverage import Coverage

        cov = Coverage.current()
        if cov is None:
            return None  # coverage.py's .pth did not start it (another Python, python -S)
        label = worker_label(told.label, worker) if worker else told.label
        return cls(cov, label, attempt=attempt, contexts=told.context == "test")

    def start_record(self, origin: RecordOrigin) -> CoverageRecord:
        # The file's own name gets its host, pid and random parts as it is first written.
        prefix = os.path.basename(str(self._cov.get_option("run:data_file")))
        return origin.build(CoverageRecord, event="process", label=self.label,
                            pid=os.getpid(), data_file=prefix)  # fmt: skip

    def context_of(self, nodeid: str) -> str:
        return f"{nodeid}|run" if self._attempt <= 1 else f"{nodeid}|attempt {self._attempt}"

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, object, object]:
        names, handed = self._contexts and self._names_tests(), None
        if names:
            context = self.context_of(item.nodeid)
            _test_context.append(context)
            self._cov.switch_context(context)
            handed = _hand_context_to_children(context)
        try:
            return (yield)
        finally:
            if names:
                self._cov.switch_context("")
                _test_context.pop()
                _restore_children_config(handed)
            if self._save_now(item, nextitem):
                self.save()

    def _names_tests(self) -> bool:
        """Whether this session's tests name their lines. Not in a process a measured test
        started (its lines are that test's, by the context it was handed), nor in a pytest
        session nested in a test (pytester's in-process runs): the outer test holds them."""
        return not self._cov.get_option("run:context") and not _test_context

    def _save_now(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool:
        if self._save_at == "file":
            return nextitem is None or nextitem.path != item.path
        return self._save_at == "test"

    def save(self) -> None:
        """Flush what was measured into this process's data file (it stays open and running).

        The collector's own flush: ``get_data()`` would also look for every source file not
        imported yet and write each into the file, again at every test; coverage.py does that
        once, at the save that ends the process."""
        collector = getattr(self._cov, "_collector", None)
        if collector is not None and hasattr(collector, "flush_data"):
            collector.flush_data()
        else:  # another coverage.py than the one this was measured on: the public way
            self._cov.get_data()
