"""The hooks a project implements in its ``conftest.py`` to plug in its own device runtime.

Registered by the plugin in ``pytest_addhooks``; all are first-result hooks: the first
implementation that returns something other than None answers. pytest registers a conftest
function as a hook only when its name starts with ``pytest_``, hence the prefix.

``pytest_simpler_runtime`` and ``pytest_simpler_device_count`` stand beside the markers
``runtime(name)`` and ``device_count(n, est=, timeout=)``: the hook answers first and the
marker decides only when no hook answered (every implementation returned None). The hook is
the project's own code and can see the marker (returning None defers to it); a marker
cannot see the hook. So this order lets a project have either rule, and the reverse would
not. simpler asks them through ``item.ihook``: only the conftests that apply to the test's
directory answer for it (``simpler/plugin/needs.py``).
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

    It has ``init()``, ``probe() -> bool``, ``force_reset()``, ``finalize() -> int``,
    ``close()`` and ``unusable`` (bool); ``drain(timeout_ms)`` and ``soft_reset()`` when it
    has them. Anything else (``run``, ``register``, ...) is the project's own API:
    ``worker.run(...)`` forwards to its ``run`` and ``worker.runner`` is the object itself.
    A new object on every call: the lifecycle calls its ``close()`` at most once, and asks
    for a new runner after a force reset. A worker that has only ``init()`` and ``close()``
    gets the rest from ``simpler.InitCloseRunner``.
    """


@pytest.hookspec(firstresult=True)
def pytest_simpler_device_error(error: BaseException) -> Any:
    """``error`` (one of the project's exceptions) as a ``simpler.DeviceRuntimeError``.

    None: not a device error. The lifecycle still decides by type and probe, never by text.
    """


@pytest.hookspec(firstresult=True)
def pytest_simpler_runtime(item: pytest.Item) -> Any:
    """The runtime of the pooled worker that serves the test ``item``: a non-empty ``str``.

    None passes: the next implementation answers, then the ``runtime(name)`` marker, then
    ``"default"``. Asked at collection for every test that uses the pooled worker (and by the
    worker fixture), e.g. ``return getattr(item.cls, "_st_runtime", None)``. Anything but a
    non-empty string, or an exception, is a usage error: one line naming the test and this
    hook, exit 2 under ``simpler run``, nothing run.
    """


@pytest.hookspec(firstresult=True)
def pytest_simpler_device_count(item: pytest.Item) -> Any:
    """How many devices the test ``item`` needs: an ``int`` of 1 or more makes it a Resource
    test, run in a child process of its own on that many devices.

    None passes: the next implementation answers, then the ``device_count(n)`` marker; with
    neither the test is an L2 test. Asked at collection for every test, by ``simpler run``'s
    up-front collection, each phase, and ``simpler capacity --collect`` (which collects
    through pytest when a ``conftest.py`` defines this hook), e.g.
    ``return CASES[item.callspec.params["case"]]["devices"]``. The marker's ``est=`` and
    ``timeout=`` still apply to a test this hook sizes. Anything but an int of 1 or more
    (a bool included), or an exception, is a usage error: one line naming the test and this
    hook, exit 2 under ``simpler run``, nothing run.
    """
