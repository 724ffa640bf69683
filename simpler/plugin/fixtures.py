"""The fixtures a device test asks for: its pooled ``worker``, its ``devices``, the platform.

They work in every session, the plugin active or not; inactive, the settings come from the
environment and the defaults (platform a5sim, device 0) and no record is written.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from simpler.errors import DeviceRuntimeError
from simpler.plugin.device_assignment import worker_device
from simpler.plugin.needs import BadHookAnswer, runtime_of
from simpler.plugin.no_device_tests import no_device_tests
from simpler.plugin.options import PluginSettings, one_runtime_per_device, resolve_settings
from simpler.plugin.project_runtime import RunnerContractError, runner_factory, translator
from simpler.plugin.state import POOL, SETTINGS, TRACE, record_origin, write_new, write_record
from simpler.plugin.test_records import AttemptTrace
from simpler.plugin.worker_pool import WorkerPool
from simpler.reporting.records import PoisonSkipRecord
from simpler.runner.cuda_driver import CudaUnavailable

if TYPE_CHECKING:
    from recovery.lifecycle import PooledWorker

__all__ = ["devices", "pooled_worker", "session_settings", "simpler_platform", "worker"]

# An xdist worker whose card holds an op nothing in the process can stop ends with this
# status (EX_TEMPFAIL: the work is to be retried), so that xdist replaces it.
PROCESS_MUST_END_EXIT_CODE = 75


def session_settings(config: pytest.Config) -> PluginSettings:
    """The active plugin's settings; inactive, resolved on first use (a bad one fails the test)."""
    settings = config.stash.get(SETTINGS, None)
    if settings is None:
        try:
            settings = resolve_settings(config, active=False)
        except pytest.UsageError as error:
            pytest.fail(f"simpler: {error}", pytrace=False)
        config.stash[SETTINGS] = settings
    return settings


def _pool(config: pytest.Config, settings: PluginSettings) -> WorkerPool:
    """This process's pooled workers, made on first use (the runner loads only then)."""
    pool = config.stash.get(POOL, None)
    if pool is None:
        workerinput = getattr(config, "workerinput", None)
        pool = WorkerPool(
            settings.platform,
            worker_device(settings.devices, workerinput),
            (workerinput or {}).get("workerid", "main"),
            functools.partial(write_record, settings),
            origin=record_origin(settings),
            recovery=settings.recovery,
            factory_for=functools.partial(runner_factory, config),
            translator=translator(config),
            one_runtime_per_device=one_runtime_per_device(config),
        )
        config.stash[POOL] = pool
    return pool


@pytest.fixture
def worker(request: pytest.FixtureRequest) -> Iterator[PooledWorker]:
    """The pooled L2 worker for this test's runtime on this process's device."""
    yield from pooled_worker(request)


def pooled_worker(request: pytest.FixtureRequest) -> Iterator[PooledWorker]:
    """The pooled worker's life around one test: the ``worker`` fixture's, and the project's
    own worker fixture's where simpler serves it (``simpler_worker_fixture``)."""
    config = request.config
    settings = session_settings(config)
    try:
        runtime = runtime_of(request.node)  # the project's hook, else the marker
    except BadHookAnswer as bad:  # asked at collection already when the plugin is active
        pytest.exit(f"simpler: {bad}", returncode=pytest.ExitCode.USAGE_ERROR)
    pool = _pool(config, settings)
    if pool.device is None:
        # The device-sharing guard: where a device is used, not a refusal of the whole session.
        pytest.fail(_no_device_message(config, settings, pool.xdist_worker), pytrace=False)
    try:
        pooled = pool.get(runtime)
    except (RunnerContractError, CudaUnavailable) as error:
        # The project's runner cannot be driven, or platform cuda finds no NVIDIA driver:
        # one line, and a usage error's exit status (simpler run refuses both up front).
        pytest.exit(f"simpler: {error}", returncode=pytest.ExitCode.USAGE_ERROR)
    trace = request.node.stash.setdefault(TRACE, AttemptTrace())
    trace.worker, trace.runtime, trace.device = str(pooled.key), runtime, pooled.key.device
    trace.pooled = pooled
    if not pooled.runnable:
        _refuse_unrunnable(pooled, request.node.nodeid, settings, trace)
    yield pooled
    # The project's exception as a device error or as is; the call's report asked the
    # project's hook already when the plugin is active.
    seen = trace.device_error if trace.error_translated else pool.translate(trace.error)
    if isinstance(seen, DeviceRuntimeError):
        trace.device_error = seen
    trace.poisoned = pooled.after_test(seen, request.node.nodeid)
    if pooled.must_end_process and hasattr(config, "workerinput"):
        _end_xdist_worker()


def _no_device_message(config: pytest.Config, settings: PluginSettings, xdist_worker: str) -> str:
    if no_device_tests(config) is not None or not settings.devices:
        # simpler run placed the test with those that use no device: its collection saw none.
        where = "this process" if not settings.devices else f"xdist worker {xdist_worker}"
        return (
            f"{where} holds no device: simpler run's collection found no pooled worker among "
            "this test's fixtures and ran it with the tests that use none (a worker asked for "
            "at run time?); a device is never shared: name the worker fixture in the test's "
            "arguments, or mark it device_count(n)"
        )
    held = ", ".join(map(str, settings.devices))
    return (
        f"xdist worker {xdist_worker} has no device of its own: every device "
        f"({held}) is held by another xdist worker, and a device is never shared "
        "(use no more xdist workers than devices, or name more devices: --simpler-device)"
    )


def _end_xdist_worker() -> None:
    """Leave at once: the controller records this test from its call report, which it already
    has (failed, poisoned: the retry re-runs it fresh), and a replacement worker takes the
    device and the tests queued behind it. Outside xdist the worker stays skipped instead:
    the later tests are poison-skipped and re-run by the retry phase."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is not None:
            stream.flush()
    os._exit(PROCESS_MUST_END_EXIT_CODE)  # no finalizer may wait on the card


def _refuse_unrunnable(
    pooled: PooledWorker, nodeid: str, settings: PluginSettings, trace: AttemptTrace
) -> None:
    if settings.phase == "retry" and settings.retry_role != "victim":
        # A trigger's own fresh process was its last chance: a failure, not another skip.
        pytest.fail(f"no usable device in a fresh process: {pooled.skip_reason}", pytrace=False)
    # A victim queued behind a second fault is registered again: the retry phase gives it
    # another fresh process instead of a verdict it never earned.
    trace.poison_skip_reason = pooled.skip_reason
    write_new(
        settings,
        PoisonSkipRecord,
        selector=nodeid,
        nodeid=nodeid,
        runtime=pooled.key.runtime,
        worker=str(pooled.key),
        device=pooled.key.device,
        reason=pooled.skip_reason,
    )
    pytest.skip(pooled.skip_reason)


@pytest.fixture
def simpler_platform(request: pytest.FixtureRequest) -> str:
    """The platform this run targets (``--simpler-platform``)."""
    return session_settings(request.config).platform


@pytest.fixture
def devices(request: pytest.FixtureRequest) -> list[int]:
    """The device ids this process was given (a Resource child's allocation)."""
    return list(session_settings(request.config).devices)
