"""The hooks a project implements in its ``conftest.py`` to plug in its own device runtime.

Registered by the plugin in ``pytest_addhooks``; both are first-result hooks: the first
implementation that returns something other than None answers. pytest registers a conftest
function as a hook only when its name starts with ``pytest_``, hence the prefix.
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["pytest_simpler_create_runner", "pytest_simpler_device_error"]


@pytest.hookspec(firstresult=True)
def pytest_simpler_create_runner(platform: str, runtime: str, device: int) -> Any:
    """The runner for ``(platform, runtime, device)``, not yet initialized; None to pass.

    It has ``init()``, ``probe() -> bool``, ``force_reset()``, ``finalize() -> int``,
    ``close()`` and ``unusable`` (bool); ``drain(timeout_ms)`` and ``soft_reset()`` when it
    has them. Anything else (``run``, ``register``, ...) is the project's own API:
    ``worker.run(...)`` forwards to its ``run`` and ``worker.runner`` is the object itself.
    """


@pytest.hookspec(firstresult=True)
def pytest_simpler_device_error(error: BaseException) -> Any:
    """``error`` (one of the project's exceptions) as a ``simpler.DeviceRuntimeError``.

    None: not a device error. The lifecycle still decides by type and probe, never by text.
    """
