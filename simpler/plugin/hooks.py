"""simpler's pytest plugin: pooled device workers that heal, a record per test, readable output.

Loaded through the ``pytest11`` entry point into every pytest run of an environment where
simpler is installed, so it is invisible until asked for (``plugin_active``): inactive, it
registers its markers and fixtures and does nothing else. It never imports cppyy itself:
the runner loads only when a test first asks for a ``worker``.
"""

from __future__ import annotations

import faulthandler
import os
import signal
from collections.abc import Callable, Generator
from pathlib import Path

import pytest

from simpler.contract import SELECTING_PHASES
from simpler.contract.child import started_by_run
from simpler.contract.settings import SIM_FAULTS_ENV
from simpler.errors import DeviceRuntimeError
from simpler.plugin.class_progress import ClassProgress, ProgressReporter
from simpler.plugin.crash_watch import CrashWatch
from simpler.plugin.deadline_guard import DeadlineGuard
from simpler.plugin.device_handover import tell_worker_pid
from simpler.plugin.fixtures import devices, simpler_platform, worker
from simpler.plugin.invocation import write_arg_description
from simpler.plugin.listed_tests import listed_tests
from simpler.plugin.needs import (
    BadHookAnswer,
    check_answers,
    device_need,
    refuse,
    refused,
    write_listing,
    write_listing_error,
)
from simpler.plugin.options import (
    PluginSettings,
    add_options,
    plugin_active,
    resolve_settings,
    worker_fixture_name,
)
from simpler.plugin.project_binding import (
    bind_options,
    bind_project,
    binding_problem,
    collection_problem,
)
from simpler.plugin.state import (
    ACTIVE,
    FINISHED,
    POOL,
    PROGRESS,
    SETTINGS,
    TRACE,
    FinishedTests,
    is_active,
    nested_session,
    record_origin,
    session_ended,
    session_started,
    write_new,
    write_record,
)
from simpler.plugin.test_records import (
    CALL_DEVICE_ERROR,
    HELD_WORKER,
    AttemptTrace,
    HeldWorker,
    ReportedDeviceError,
    build_test_record,
)
from simpler.reporting.records import SessionRecord

__all__ = [
    "devices",
    "pytest_addhooks",
    "pytest_addoption",
    "pytest_cmdline_main",
    "pytest_collection",
    "pytest_collection_finish",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_report_teststatus",
    "pytest_runtest_makereport",
    "pytest_runtest_protocol",
    "pytest_sessionfinish",
    "pytest_sessionstart",
    "simpler_platform",
    "worker",
]

# A child of ``simpler run`` keeps the real stderr before pytest captures fd 2, so the stack
# dump the orchestrator asks for (SIGUSR1) reaches the child's log, not a capture buffer.
_DUMP_FD = os.dup(2) if started_by_run(os.environ) else None
# Under simpler, xdist replaces a crashed worker at most this many times per xdist worker
# (unless --max-worker-restart says otherwise): enough for a few real crashes on every
# device, and a worker that dies at start or on every test ends the session in seconds.
RESTARTS_PER_WORKER = 2


def after_fork() -> None:
    """In a child forked from simpler's warm process, before pytest starts: keep the real
    stderr for stack dumps, as a fresh child does when this module is imported."""
    global _DUMP_FD
    _DUMP_FD = os.dup(2) if started_by_run(os.environ) else None


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """The hooks a project's conftest implements to plug in its own runtime."""
    from simpler.plugin import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Size xdist to the devices before xdist starts its workers (only when asked for).

    No session-wide refusal: an xdist worker past the devices fails only the tests that ask
    it for a ``worker`` (the ``worker`` fixture says why); ``simpler run`` refuses up front.
    """
    nested = nested_session(config)
    if not plugin_active(config, nested=nested):
        return  # inactive: xdist is left alone, nothing is refused
    settings = resolve_settings(config, nested=nested)
    bind_options(config, settings)  # the project's options and simpler's, before its configure
    max_parallel = config.option.simpler_max_parallel
    if max_parallel is not None and max_parallel < 1:
        raise pytest.UsageError(f"--simpler-max-parallel must be 1 or more, got {max_parallel}")
    if not hasattr(config.option, "numprocesses") or config.option.collectonly:
        return  # collecting starts no xdist worker (an -n in a project's addopts included)
    if max_parallel is not None and not config.option.numprocesses:
        config.option.numprocesses = max_parallel
    wanted = config.option.numprocesses
    no_cap = getattr(config.option, "maxworkerrestart", "") is None  # the user set none
    if isinstance(wanted, int) and wanted > 0 and settings.report is not None and no_cap:
        config.option.maxworkerrestart = str(RESTARTS_PER_WORKER * wanted)


def pytest_unconfigure(config: pytest.Config) -> None:
    session_ended(config)


@pytest.hookimpl(trylast=True)  # after the terminal reporter exists
def pytest_configure(config: pytest.Config) -> None:
    # Registered active or not: a --strict-markers suite that uses them must still collect.
    config.addinivalue_line("markers", "runtime(name): the runtime the test's pooled worker runs")
    config.addinivalue_line(
        "markers", "unskippable: simpler run --affected-since runs this test whatever changed"
    )
    config.addinivalue_line(
        "markers",
        "device_count(n, est=None, timeout=None): a Resource test needing n devices "
        "(est, timeout: seconds)",
    )
    nested = nested_session(config)
    config.stash[ACTIVE] = plugin_active(config, nested=nested)
    if not config.stash[ACTIVE]:
        return  # invisible: no records, no output, no faults, no xdist hooks
    session_started(config)
    settings = resolve_settings(config, nested=nested)
    config.stash[SETTINGS] = settings
    config.stash[FINISHED] = FinishedTests()
    config.pluginmanager.register(config.stash[FINISHED], "simpler-finished-tests")
    _measure_coverage(config, settings)
    tell_worker_pid(config)
    if settings.told.deadline is not None:
        guard = DeadlineGuard(settings.told.deadline, settings)
        config.pluginmanager.register(guard, "simpler-deadline")
    bind_project(config)  # the pool serves the project's worker fixture; simpler dispatches
    if _DUMP_FD is not None:
        # A hung child must be diagnosable: the orchestrator sends SIGUSR1 before it kills.
        faulthandler.register(signal.SIGUSR1, file=_DUMP_FD, all_threads=True, chain=False)
    if settings.faults:
        from simpler import runner

        source = f"{SIM_FAULTS_ENV}/--simpler-sim-fault"
        try:
            plan = runner.configure_faults(settings.faults, source=source)
        except ValueError as error:
            raise pytest.UsageError(str(error)) from None
        unsupported = plan.unsupported_on(settings.platform)
        if unsupported:
            raise pytest.UsageError(
                f"{source}: platform {settings.platform!r} cannot inject {', '.join(unsupported)}"
            )
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    if settings.class_lines and terminal is not None and not hasattr(config, "workerinput"):
        terminal.showfspath = False  # the class lines name their files themselves
        config.stash[PROGRESS] = ClassProgress(terminal, live=terminal.isatty())
        config.pluginmanager.register(ProgressReporter(config.stash[PROGRESS]), "simpler-progress")


def _measure_coverage(config: pytest.Config, settings: PluginSettings) -> None:
    """In a process a measured run started: name it, name each test's lines, save per test."""
    from simpler.coverage.in_process import ProcessCoverage, hand_to_workers

    told = settings.told.coverage
    hand_to_workers(told, distributes=bool(getattr(config.option, "numprocesses", 0)))
    worker = getattr(config, "workerinput", {}).get("workerid")
    measured = ProcessCoverage.here(told, worker=worker, attempt=settings.attempt)
    if measured is not None:
        config.pluginmanager.register(measured, "simpler-coverage")
        write_record(settings, measured.start_record(record_origin(settings)))


def pytest_sessionstart(session: pytest.Session) -> None:
    """An xdist controller hands out the devices and answers for workers that crash.

    Here, not in ``pytest_configure``: xdist registers its controller in a ``pytest_configure``
    that may run after ours; it starts the workers in a ``pytest_sessionstart`` after this one.
    """
    config = session.config
    if is_active(config) and config.pluginmanager.has_plugin("dsession"):
        settings = config.stash[SETTINGS]
        watch = CrashWatch(config, settings, active=settings.report is not None)
        config.pluginmanager.register(watch, "simpler-crashes")


def uses_pooled_worker(item: pytest.Item) -> bool:
    """The test asks for a pooled device ``worker``, or the project's own worker fixture that
    the pool serves (``simpler_worker_fixture``), directly or through its fixtures."""
    names = getattr(item, "fixturenames", ())
    return "worker" in names or worker_fixture_name(item.config) in names


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """L2 runs the pooled tests, Resource the ``device_count`` ones; each phase only its own.

    First every test's needs are asked of the project's hooks: a bad answer ends the session
    here, as a usage error, before anything runs (and tells ``simpler run`` in the listing).
    """
    if not is_active(config):
        return
    try:
        check_answers(items, pooled=uses_pooled_worker)
    except BadHookAnswer as bad:
        raise refuse(session, bad) from None
    only = listed_tests(config, "simpler_only_tests")
    if only is not None:  # simpler run --affected-since: the tests a change can break
        _keep(config, items, lambda item: item.nodeid in only)
    phase = config.stash[SETTINGS].phase
    if phase not in SELECTING_PHASES:
        return
    wants_devices = phase == "resource"
    _keep(config, items, lambda item: (device_need(item) is not None) == wants_devices)


def _keep(
    config: pytest.Config, items: list[pytest.Item], wanted: Callable[[pytest.Item], bool]
) -> None:
    """Deselect, as pytest's own ``--deselect`` does, the items that are not ``wanted``."""
    keep = [item for item in items if wanted(item)]
    if len(keep) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if not wanted(item)])
        items[:] = keep


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    if not is_active(item.config):
        return (yield)
    from simpler import runner

    settings = item.config.stash[SETTINGS]
    item.stash[TRACE] = AttemptTrace()
    runner.set_test_context(item.nodeid, settings.attempt)
    try:
        return (yield)
    finally:
        runner.set_test_context("", settings.attempt)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    test_report = yield
    trace = item.stash.get(TRACE, None)
    if trace is None or not is_active(item.config):
        return test_report
    trace.reports.append(test_report)
    if call.when == "setup" and trace.worker is not None and trace.device is not None:
        # Travels with the setup report to an xdist controller: if this process dies during
        # the test, the controller knows which pooled worker (and device) it held.
        held = HeldWorker(trace.worker, trace.runtime or "", trace.device)
        setattr(test_report, HELD_WORKER, held.as_json())
    if call.when == "call" and call.excinfo is not None:
        trace.error = call.excinfo.value
    if call.when == "call" and trace.worker is not None:
        # Travels with the call report: if the worker fixture ends this process in teardown
        # (an op nothing in it can stop), the controller's crash record says why.
        reported = _call_device_error(item, trace)
        if reported is not None:
            setattr(test_report, CALL_DEVICE_ERROR, reported.as_json())
    if call.when == "teardown":
        from simpler import runner

        trace.kernels = runner.launched_kernels()
        settings = item.config.stash[SETTINGS]
        record = build_test_record(
            item.nodeid,
            trace,
            origin=record_origin(settings),
            attempt=settings.attempt,
            retry_role=settings.retry_role,
        )
        write_record(settings, record)
    return test_report


def _call_device_error(item: pytest.Item, trace: AttemptTrace) -> ReportedDeviceError | None:
    """The test's device error (the project's hook translates its own), or the runner's word
    that the process must end when the test caught the error and passed."""
    pool = item.config.stash.get(POOL, None)
    seen = pool.translate(trace.error) if pool is not None else trace.error
    trace.error_translated = pool is not None
    runner = getattr(trace.pooled, "runner", None)
    must_end = bool(getattr(runner, "process_must_end", False))
    if isinstance(seen, DeviceRuntimeError):
        trace.device_error = seen
        ends = seen.process_must_end or must_end
        return ReportedDeviceError(seen.rc, seen.where, seen.message, ends)
    return ReportedDeviceError(None, None, "", True) if must_end else None


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> bool | None:
    """For ``simpler run``: what pytest made of each argument; collect only for a listing."""
    target = session.config.option.simpler_args
    if not target:
        return None
    write_arg_description(session.config, Path(target))
    return None if session.config.option.simpler_list else True


def pytest_collection_finish(session: pytest.Session) -> None:
    """For ``simpler run``: every collected test, with its device count (None: an L2 test)."""
    if refused(session.config):
        return  # a bad hook answer ended the collection; its line is the listing
    target = session.config.option.simpler_list
    if not target:
        problem = binding_problem(session.config) if is_active(session.config) else None
        if problem is not None:  # a conftest of a collected folder runs its loop first
            raise pytest.UsageError(problem)
        return
    problem = collection_problem(session.config, session.items)
    if problem is not None:
        write_listing_error(Path(target), problem)
        return
    write_listing(Path(target), session.items, pooled=uses_pooled_worker)


def pytest_sessionfinish(session: pytest.Session) -> None:
    pool = session.config.stash.get(POOL, None)
    if pool is not None:
        pool.shutdown()
    _record_early_stop(session)


def _record_early_stop(session: pytest.Session) -> None:
    """``-x``/``--maxfail`` cut the session short: say so, and how many tests never ran."""
    config = session.config
    stopped = session.shouldfail or session.shouldstop
    if not stopped or hasattr(config, "workerinput") or not is_active(config):
        return
    write_new(
        config.stash[SETTINGS],
        SessionRecord,
        stopped=str(stopped),
        collected=session.testscollected,
        finished=config.stash[FINISHED].count,
    )


@pytest.hookimpl(wrapper=True)
def pytest_report_teststatus(
    report: pytest.TestReport, config: pytest.Config
) -> Generator[None, tuple[str, str, str] | None, tuple[str, str, str] | None]:
    """With class lines on, a test prints no dot of its own; every word stays pytest's.

    A wrapper, not a first result: pytest's own answers (xfail, subtests, which also marks
    a test with a failed subtest as failed) must still be given, or its -r summary breaks.
    """
    status = yield
    if PROGRESS not in config.stash or not status:
        return status
    category, _letter, word = status
    return category, "", word
