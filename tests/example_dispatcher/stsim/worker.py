"""The project's workers: one runtime on one device (level 2), or on several (level 3)."""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from stsim import card

__all__ = ["KERNELS", "PLATFORMS", "StL3Worker", "StWorker", "open_worker"]

PLATFORMS = ("stsim",)


def _softmax(x: np.ndarray) -> np.ndarray:
    shifted = np.exp(x - x.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


KERNELS: dict[str, Callable[..., np.ndarray]] = {
    "vector_add": np.add,
    "softmax": _softmax,
    "reduce_sum": lambda x: x.sum(axis=0),
    "scale2": lambda x: 2.0 * x,
}


class StWorker:
    """A context on one device: ``init()``, ``run()``, ``close()`` and a buffer store."""

    def __init__(self, device: int, platform: str, runtime: str) -> None:
        self.device, self.platform, self.runtime = device, platform, runtime
        self._open = False
        self._broken = False
        self._buffers: dict[str, np.ndarray] = {}

    def init(self) -> None:
        if self.platform not in PLATFORMS:
            raise ValueError(f"stsim runs {', '.join(PLATFORMS)}, not {self.platform!r}")
        card.claim(self.device)
        if card.failing(self.device):
            raise card.device_error("rtSetDevice", self.device, card.CARD_FAILING_CODE)
        self._open = True

    def run(self, kernel: str, *tensors: np.ndarray) -> np.ndarray:
        if not self._open or self._broken or card.failing(self.device):
            raise card.device_error("rtKernelLaunch", self.device, card.CARD_FAILING_CODE)
        if card.fault_due(kernel):
            self._broken = True
            if os.environ.get("STSIM_STICKY") == "1":
                card.mark_failing(self.device)
            api = "aclrtSynchronizeStreamWithTimeout"
            raise card.device_error(api, self.device, card.TIMEOUT_CODE)
        return np.asarray(KERNELS[kernel](*tensors))

    def store(self, name: str, tensor: np.ndarray) -> None:
        self._buffers[name] = np.array(tensor)

    def load(self, name: str) -> np.ndarray:
        return self._buffers[name]

    def close(self) -> None:
        self._open = False
        self._buffers.clear()


class StL3Worker:
    """One runtime across several devices: a level-3 (multi-chip) test's worker."""

    def __init__(self, devices: list[int], platform: str, runtime: str) -> None:
        self.chips = [StWorker(device, platform, runtime) for device in devices]

    def init(self) -> None:
        for chip in self.chips:
            chip.init()

    def run_sharded(self, kernel: str, shards: list[np.ndarray]) -> list[np.ndarray]:
        return [chip.run(kernel, shard) for chip, shard in zip(self.chips, shards, strict=True)]

    def close(self) -> None:
        for chip in self.chips:
            chip.close()


def open_worker(device: int, platform: str, runtime: str) -> StWorker:
    worker = StWorker(device, platform, runtime)
    worker.init()
    return worker
