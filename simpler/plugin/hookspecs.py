"""The hooks a project implements in its ``conftest.py`` to plug in its own device runtime.

Registered in ``pytest_addhooks``; all first-result, and named ``pytest_`` so that pytest
registers a conftest function as a hook. ``pytest_simpler_runtime`` and
``pytest_simpler_device_count`` answer before the markers (docs/design.md, Runtime hooks;
why: docs/architecture.md, "What a test needs").
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = [
    "pytest_simpler_create_runner",
    "pytest_simpler_device_count",
    "pytest_simpler_device_error",
    "pytest_simpler_runtime",
]


@pytest.hookspec(firstresult=True)
def pytest_simpler_create_runner(platform: str, runtime: str, device: int) -> Any:
    """The runner for ``(platform, runtime, device)``, not yet initialized; None to pass.

    A new object on every call, with ``init()``, ``probe() -> bool``, ``force_reset()``,
    ``finalize() -> int``, ``close()``, ``unusable`` and maybe ``drain(timeout_ms)`` and
    ``soft_reset()``; anything else is the project's own API (docs/design.md, Runtime hooks).
    A worker with only ``init()`` and ``close()`` gets the rest from ``simpler.InitCloseRunner``.
    """


@pytest.hookspec(firstresult=True)
def pytest_simpler_device_error(error: BaseException) -> Any:
    """``error`` (one of the project's exceptions) as a ``simpler.DeviceRuntimeError``.

    None: not a device error. The lifecycle still decides by type and probe, never by text.
    """


@pytest.hookspec(firstresult=True)
def pytest_simpler_runtime(item: pytest.Item) -> Any:
    """The runtime of the pooled worker that serves the test ``item``: a non-empty ``str``.

    None passes: the next implementation, then the ``runtime(name)`` marker, then
    ``"default"``. Asked at collection for every test that uses the pooled worker (and by the
    worker fixture), e.g. ``return getattr(item.cls, "_st_runtime", None)``. Anything else, or
    an exception, is a usage error naming the test and this hook (exit 2, nothing run).
    """


@pytest.hookspec(firstresult=True)
def pytest_simpler_device_count(item: pytest.Item) -> Any:
    """How many devices the test ``item`` needs: an ``int`` of 1 or more makes it a Resource
    test, run in a child process of its own on that many devices.

    None passes: the next implementation, then the ``device_count(n)`` marker, else an L2
    test; the marker's ``est=`` and ``timeout=`` still apply. Anything else (a bool too), or an
    exception, is a usage error naming the test and this hook (exit 2, nothing run).
    """
