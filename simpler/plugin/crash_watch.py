"""The xdist controller's side of the plugin: devices for its workers, and their crashes.

Registered only in an xdist controller: each worker gets a device of its own, a crash is the
``failed`` record of the test that was running, the tests a crash-stopped session never ran
are recorded, and under ``simpler run`` xdist's scope schedulers are replaced by crash-safe
ones (docs/architecture.md, "The xdist controller: devices and crashes").
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from simpler.coverage.process_env import worker_label
from simpler.plugin.device_assignment import ASSIGNED_DEVICE, DeviceAssigner
from simpler.plugin.device_handover import DeviceHandover, handover_file
from simpler.plugin.no_device_tests import known_to_use_no_device
from simpler.plugin.options import PluginSettings
from simpler.plugin.state import record_origin, write_new, write_record
from simpler.plugin.test_records import (
    CALL_DEVICE_ERROR,
    HELD_WORKER,
    HeldWorker,
    ReportedDeviceError,
    build_crash_record,
    build_not_run_record,
)
from simpler.reporting.records import CoverageRecord

__all__ = ["CrashWatch"]


class CrashWatch:
    def __init__(self, config: pytest.Config, settings: PluginSettings, *, active: bool) -> None:
        self._config = config
        self._settings = settings
        self._active = active  # under simpler (records wanted): also fix xdist's scheduling
        self.devices = DeviceAssigner(settings.devices)
        freed = handover_file(config)
        self._handover = DeviceHandover(freed, self.devices) if freed is not None else None
        self._collection: list[str] = []
        self._started: dict[str, float] = {}  # nodeid -> when its worker started it
        self._setup_done: dict[str, HeldWorker | None] = {}  # nodeid -> worker its setup held
        self._device_errors: dict[str, ReportedDeviceError] = {}  # nodeid -> its call's error
        self._finished: set[str] = set()  # every test with a verdict
        self._down: dict[str, str] = {}  # xdist worker id -> why it went down
        self._not_run_line = ""
        self.crashes = 0

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[ASSIGNED_DEVICE] = self.devices.assign(node.gateway.id)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object | None) -> None:
        if error is not None:
            self.crashes += 1
            self._down[node.gateway.id] = str(error)
            self._coverage_lost(str(node.gateway.id), str(error))
        if self._handover is not None:
            self._handover.worker_down(node, error)
        self.devices.free(node.gateway.id)

    def _coverage_lost(self, worker_id: str, error: str) -> None:
        """A measured worker that crashed saved only up to its last finished test."""
        measured = self._settings.told.coverage
        if measured is not None:
            why = f"xdist worker crashed: {error.splitlines()[0] if error else 'no reason'}"
            label = worker_label(measured.label, worker_id)
            write_new(self._settings, CoverageRecord, event="ended", why=why, label=label)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any | None:
        if not self._active:
            return None  # outside simpler, xdist is left alone
        from simpler.plugin.xdist_scheduling import make_scheduler

        return make_scheduler(config, log)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if not self._collection:
            self._collection = list(ids)

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self._started[nodeid] = time.time()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "setup":
            held = HeldWorker.from_json(getattr(report, HELD_WORKER, None))
            self._setup_done[report.nodeid] = held
        elif report.when == "call":
            error = ReportedDeviceError.from_json(getattr(report, CALL_DEVICE_ERROR, None))
            if error is not None:
                self._device_errors[report.nodeid] = error
        elif report.when == "teardown":
            self._device_errors.pop(report.nodeid, None)
            self._finished.add(report.nodeid)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any) -> None:
        node: Any = getattr(report, "node", None)
        worker_id = str(node.gateway.id) if node is not None else "?"
        workerinput = getattr(node, "workerinput", {}) if node is not None else {}
        held = self._setup_done.get(crashitem)
        # Did the test hold a pooled worker? Its setup report says so exactly (the worker
        # fixture runs in setup, and the report reaches this process before the call starts).
        # Without a setup report the process died in setup, most likely in the worker fixture
        # starting its device: an L2 test uses the pooled worker (docs/design.md, Phases),
        # so it counts as holding one, and the fresh-process retry decides what it was --
        # except a test that simpler run's collection found uses no device.
        uses_none = known_to_use_no_device(self._config, crashitem)
        setup_died = crashitem not in self._setup_done and not uses_none
        poisoned = held is not None or setup_died
        started = self._started.get(crashitem)
        record = build_crash_record(
            crashitem,
            origin=record_origin(self._settings),
            xdist_worker=worker_id,
            held=held,
            device=workerinput.get(ASSIGNED_DEVICE),
            poisoned=poisoned,
            down=self._down.get(worker_id, "crashed"),
            attempt=self._settings.attempt,
            duration_s=time.time() - started if started is not None else 0.0,
            device_error=self._device_errors.pop(crashitem, None),
        )
        write_record(self._settings, record)
        self._finished.add(crashitem)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """After crashes, name every collected test that got no verdict (unless interrupted)."""
        if not self.crashes or exitstatus == pytest.ExitCode.INTERRUPTED:
            return
        if not self._collection:
            # Workers that die before any finishes collecting leave no test to name; without
            # this, pytest's "no tests ran" (exit 5) would pass for an empty selection.
            self._not_run_line = (
                f"simpler: no test ran: xdist workers crashed {self.crashes} time(s) "
                "before any of them finished collecting"
            )
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
            return
        missing = [nodeid for nodeid in self._collection if nodeid not in self._finished]
        if not missing:
            return
        reason = self._not_run_reason()
        origin = record_origin(self._settings)
        for nodeid in missing:
            write_record(
                self._settings,
                build_not_run_record(
                    nodeid, origin=origin, reason=reason, attempt=self._settings.attempt
                ),
            )
        self._not_run_line = f"simpler: {len(missing)} test(s) {reason}"

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self._not_run_line:  # printed after pytest's progress line, with its summary
            terminalreporter.write_line(self._not_run_line, red=True)

    def _not_run_reason(self) -> str:
        session = "L2 session" if self._settings.phase == "l2" else "xdist session"
        cap = self._config.getoption("maxworkerrestart", None)
        if cap is not None and self.crashes > int(cap):
            return (
                f"not run: the {session} stopped after {self.crashes} worker crashes "
                f"(--max-worker-restart {cap})"
            )
        return (
            f"not run: the {session} ended without running it, "
            f"after {self.crashes} worker crash(es)"
        )
