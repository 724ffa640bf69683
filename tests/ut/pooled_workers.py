"""A PooledWorker as the unit tests build it: started, its lifecycle records kept in a list
(each as the dict its report line holds).

Tests of the CUDA runner import it in a child process of their own (tests/ut on its path).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from recovery import PooledWorker, WorkerKey
from recovery.lifecycle import RecordSink
from simpler import DeviceRuntimeError
from simpler.reporting.records import RecordOrigin

__all__ = [
    "ORIGIN",
    "device_error",
    "keeping",
    "launch_error",
    "lifecycle_path",
    "project_worker",
    "started_worker",
]

ORIGIN = RecordOrigin("run-1", "l2")  # the run and phase of the workers' records


def keeping(records: list[dict[str, Any]]) -> RecordSink:
    """A worker's record sink that keeps each record as the dict its line holds."""
    return lambda record: records.append(record.to_dict())


def started_worker(
    records: list[dict[str, Any]],
    *,
    platform: str = "a5sim",
    runtime: str = "host_build_graph",
    device: int = 0,
    worker: str = "main",
    **options: Any,
) -> PooledWorker:
    """A started worker on simpler's own runner for ``platform`` unless ``factory`` is given."""
    key = WorkerKey(platform, runtime, device, worker)
    pooled = PooledWorker(key, keeping(records), origin=ORIGIN, **options)
    pooled.start()
    return pooled


def project_worker(
    records: list[dict[str, Any]], make_runner: Callable[[], Any], **options: Any
) -> PooledWorker:
    """A started worker of a project's own runtime (``myhw``, ``own``) on ``make_runner()``."""
    return started_worker(
        records,
        platform="myhw",
        runtime="own",
        factory=lambda platform, device: make_runner(),
        **options,
    )


def lifecycle_path(records: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """Each lifecycle record as (source, dest, trigger)."""
    return [(r["source"], r["dest"], r["trigger"]) for r in records]


def device_error(target: Any, kernel: str = "spin", *inputs: Any) -> DeviceRuntimeError:
    """The device error ``target.run(kernel, *inputs)`` must raise (a Runner or a PooledWorker)."""
    with pytest.raises(DeviceRuntimeError) as caught:
        target.run(kernel, *inputs)
    return caught.value


def launch_error(target: Any, kernel: str = "noop") -> DeviceRuntimeError | None:
    """The device error ``target.run(kernel)`` raises, or None: the caller asserts which."""
    try:
        target.run(kernel)
    except DeviceRuntimeError as error:
        return error
    return None
