"""Scene tests: a class names its kernel and a table of cases; ``test_run`` runs each case and
checks it against a golden computed on the host.

``@scene_test(level, runtime)`` is where a class gets the markers simpler schedules by:
``runtime(name)`` for every class (its pooled worker's runtime) and, at level 3 and up,
``device_count(n)`` with n the most devices any of its cases asks for (a Resource test).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import numpy as np
import pytest

from chipsim.worker import ChipWorker

__all__ = ["MultiChipSceneTestCase", "SceneTestCase", "scene_test"]

Scene = TypeVar("Scene", bound=type)
CASE_KEYS = frozenset({"name", "platforms", "params", "config"})


class SceneTestCase:
    """One kernel on one device, through the pooled ``worker`` simpler hands the test."""

    KERNEL: ClassVar[str] = ""
    CASES: ClassVar[list[dict[str, Any]]] = []
    RUNTIME: ClassVar[str] = ""  # set by @scene_test
    RTOL: ClassVar[float] = 1e-5
    ATOL: ClassVar[float] = 1e-6

    def generate_args(self, params: dict[str, Any]) -> list[np.ndarray]:
        raise NotImplementedError

    def compute_golden(self, args: list[np.ndarray], params: dict[str, Any]) -> np.ndarray:
        raise NotImplementedError

    def test_run(self, worker: Any, case: dict[str, Any]) -> None:
        params = case.get("params", {})
        args = self.generate_args(params)
        handle = worker.runner.register(self.KERNEL)
        output = worker.run(handle, *args)
        golden = self.compute_golden(args, params)
        np.testing.assert_allclose(output, golden, rtol=self.RTOL, atol=self.ATOL)


class MultiChipSceneTestCase(SceneTestCase):
    """One kernel on several devices, each with a shard; the host combines the outputs.

    Runs as a Resource test: the ``devices`` fixture names the devices this process was given.
    """

    def generate_args(self, params: dict[str, Any]) -> list[np.ndarray]:
        """One input per device."""
        raise NotImplementedError

    def combine(self, outputs: list[np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    def test_run(self, devices: list[int], simpler_platform: str, case: dict[str, Any]) -> None:
        params = case.get("params", {})
        needed = int(case.get("config", {}).get("device_count", 1))
        if len(devices) < needed:
            pytest.skip(f"needs {needed} devices, this process has {devices}")
        chips = [ChipWorker(device) for device in devices[:needed]]
        shards = self.generate_args(params)
        try:
            outputs = []
            for chip, shard in zip(chips, shards, strict=True):
                chip.init(simpler_platform, self.RUNTIME)
                outputs.append(chip.run(chip.register(self.KERNEL), shard))
        finally:
            for chip in chips:
                chip.close()
        golden = self.compute_golden(shards, params)
        np.testing.assert_allclose(self.combine(outputs), golden, rtol=self.RTOL, atol=self.ATOL)


def scene_test(level: int, runtime: str) -> Callable[[Scene], Scene]:
    def decorate(cls: Scene) -> Scene:
        cases = _checked_cases(cls, level)
        cls.RUNTIME = runtime
        marks = [
            pytest.mark.runtime(runtime),
            pytest.mark.parametrize(
                "case", [pytest.param(case, id=case["name"]) for case in cases]
            ),
        ]
        if level >= 3:
            devices = max(int(c.get("config", {}).get("device_count", 1)) for c in cases)
            marks.append(pytest.mark.device_count(devices, est=2.0, timeout=60))
        for mark in marks:
            cls = mark(cls)
        return cls

    return decorate


def _checked_cases(cls: type, level: int) -> list[dict[str, Any]]:
    """A mistake in a table is an error at import, naming the class, not a puzzling run."""
    base = MultiChipSceneTestCase if level >= 3 else SceneTestCase
    if not issubclass(cls, base) or (level < 3 and issubclass(cls, MultiChipSceneTestCase)):
        raise TypeError(f"{cls.__name__}: a level {level} scene test subclasses {base.__name__}")
    cases: list[dict[str, Any]] = list(getattr(cls, "CASES", []))
    names = [case.get("name") for case in cases]
    if not cases or None in names or len(set(names)) != len(names):
        raise TypeError(f"{cls.__name__}: CASES needs one or more cases, each with its own name")
    for case in cases:
        unknown = set(case) - CASE_KEYS
        if unknown:
            raise TypeError(f"{cls.__name__}: case {case['name']}: unknown keys {sorted(unknown)}")
    return cases
