"""The fixtures a device test asks for: its pooled ``worker``, its ``devices``, the platform."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from simpler.plugin.options import PluginSettings
from simpler.plugin.state import POOL, SETTINGS, TRACE, write_record
from simpler.plugin.test_records import TestTrace

if TYPE_CHECKING:
    from recovery.lifecycle import PooledWorker

__all__ = ["devices", "simpler_platform", "worker"]

DEFAULT_RUNTIME = "default"


@pytest.fixture
def worker(request: pytest.FixtureRequest) -> Iterator[PooledWorker]:
    """The pooled L2 worker for this test's runtime on this process's device."""
    config = request.config
    settings = config.stash[SETTINGS]
    marker = request.node.get_closest_marker("runtime")
    runtime = str(marker.args[0]) if marker and marker.args else DEFAULT_RUNTIME
    pool = config.stash[POOL]
    if pool.device is None:
        held = ", ".join(map(str, settings.devices))
        pytest.fail(
            f"xdist worker {pool.xdist_worker} has no device of its own: every device "
            f"({held}) is held by another live xdist worker, and a device is never shared",
            pytrace=False,
        )
    pooled = pool.get(runtime)
    trace = request.node.stash[TRACE]
    trace.worker, trace.runtime, trace.device = str(pooled.key), runtime, pooled.key.device
    if not pooled.runnable:
        _refuse_unrunnable(pooled, request.node.nodeid, settings, trace)
    yield pooled
    trace.poisoned = pooled.after_test(trace.error, request.node.nodeid)


def _refuse_unrunnable(
    pooled: PooledWorker, nodeid: str, settings: PluginSettings, trace: TestTrace
) -> None:
    if settings.phase == "retry" and settings.retry_role != "victim":
        # A trigger's own fresh process was its last chance: a failure, not another skip.
        pytest.fail(f"no usable device in a fresh process: {pooled.skip_reason}", pytrace=False)
    # A victim queued behind a second fault is registered again: the retry phase gives it
    # another fresh process instead of a verdict it never earned.
    trace.poison_skip_reason = pooled.skip_reason
    write_record(
        settings,
        {
            "type": "poison_skip",
            "selector": nodeid,
            "nodeid": nodeid,
            "runtime": pooled.key.runtime,
            "worker": str(pooled.key),
            "reason": pooled.skip_reason,
        },
    )
    pytest.skip(pooled.skip_reason)


@pytest.fixture
def simpler_platform(request: pytest.FixtureRequest) -> str:
    """The platform this run targets (``--platform``)."""
    return request.config.stash[SETTINGS].platform


@pytest.fixture
def devices(request: pytest.FixtureRequest) -> list[int]:
    """The device ids this process was given (a Resource child's allocation)."""
    return list(request.config.stash[SETTINGS].devices)
