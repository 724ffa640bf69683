"""The example project's conftest: the options it always had, and what it adds for simpler.

The additions are the lines marked ``simpler:`` -- the adapter ``ChipRunner``, the two hooks
and the hand-over of ``--platform``/``--device`` in a plain pytest run. The rest (options, the
platform and runtime filters) is what a dispatcher-style project already has.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
import simpler

from chipsim import PLATFORMS, ChipError, ChipWorker
from chipsim import card as cards


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--platform", default="chipsim", help="target platform: chipsim")
    parser.addoption("--device", default="0", help="device id or range: 0, 0-3, 0,2")
    parser.addoption("--runtime", default=None, help="only the tests of this runtime")


def target_platform(config: pytest.Config) -> str:
    # simpler: `simpler run --platform P` starts every pytest with --simpler-platform=P, never
    # with this project's --platform, so simpler's value wins where it is given.
    return str(config.getoption("simpler_platform", None) or config.getoption("platform"))


def pytest_configure(config: pytest.Config) -> None:
    # simpler: in a plain pytest run, simpler's fixtures (`worker`, `devices`,
    # `simpler_platform`) read their platform and devices from these two variables; hand
    # them this project's options. `simpler run` sets them itself.
    if not config.getoption("simpler_platform", None):
        os.environ["SIMPLER_PLATFORM"] = config.getoption("platform")
        os.environ["SIMPLER_DEVICES"] = config.getoption("device")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    platform = target_platform(config)
    wanted_runtime = config.getoption("runtime")
    kept = []
    for item in items:
        marker = item.get_closest_marker("runtime")
        if wanted_runtime and marker is not None and marker.args[0] != wanted_runtime:
            continue
        callspec = getattr(item, "callspec", None)
        case = callspec.params.get("case", {}) if callspec is not None else {}
        platforms = case.get("platforms")
        if platforms and platform not in platforms:
            item.add_marker(pytest.mark.skip(reason=f"runs on {', '.join(platforms)} only"))
        kept.append(item)
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept


class ChipRunner:
    """simpler: what simpler's worker lifecycle calls, on top of the project's ``ChipWorker``.

    ``init``/``close`` are the worker's own; ``probe``, ``force_reset``, ``finalize`` and
    ``unusable`` ask the card. ``register`` and ``run`` are the project's API: a test calls
    ``worker.run(...)`` (forwarded here) and ``worker.runner.register(...)``.
    """

    def __init__(self, platform: str, runtime: str, device: int) -> None:
        self.platform = platform
        self.runtime = runtime
        self.device = device
        self.chip = ChipWorker(device)

    def init(self) -> None:
        self.chip.init(self.platform, self.runtime)

    def register(self, kernel: str) -> int:
        return self.chip.register(kernel)

    def run(self, handle: int, *tensors: np.ndarray) -> np.ndarray:
        return self.chip.run(handle, *tensors)

    def probe(self) -> bool:
        return cards.healthy(self.device)

    @property
    def unusable(self) -> bool:
        return not cards.healthy(self.device)

    def force_reset(self) -> None:
        cards.reset(self.device)

    def finalize(self) -> int:
        """0 when the card is clean: the code simpler records when it closes this worker."""
        return 0 if cards.healthy(self.device) else cards.FAULT_CODE

    def close(self) -> None:
        self.chip.close()


def pytest_simpler_create_runner(platform: str, runtime: str, device: int) -> Any:
    # simpler: the pooled worker for one runtime on one device; None for a platform it is not.
    return ChipRunner(platform, runtime, device) if platform in PLATFORMS else None


def pytest_simpler_device_error(error: BaseException) -> Any:
    # simpler: a ChipError is a device error; its code and API become the lifecycle's rc and
    # where. Anything else (a golden mismatch, a bug in a test) is not.
    if not isinstance(error, ChipError):
        return None
    return simpler.DeviceRuntimeError(
        error.code, error.api, str(error), device=error.device, platform="chipsim"
    )
