"""The project's worker: one runtime on one device, the API a nanobind class would have."""

from __future__ import annotations

import numpy as np

from chipsim import card as cards
from chipsim.errors import ChipError
from chipsim.kernels import KERNELS

__all__ = ["CONTEXT_BUSY_CODE", "PLATFORMS", "ChipWorker"]

PLATFORMS = ("chipsim",)
# Like CANN's AICPU framework, a device context holds one runtime: loading a second one
# into it while the first is open is refused.
CONTEXT_BUSY_CODE = 507018


class ChipWorker:
    def __init__(self, device: int) -> None:
        self.device = device
        self.runtime: str | None = None
        self._card: cards.Card | None = None
        self._kernels: list[str] = []

    def init(self, platform: str, runtime: str) -> None:
        if platform not in PLATFORMS:
            raise ValueError(f"chipsim runs {', '.join(PLATFORMS)}, not {platform!r}")
        card = cards.card(self.device)
        if card.failing:
            raise ChipError("simpler_init", cards.FAULT_CODE, self.device)
        if card.runtime not in (None, runtime):
            raise ChipError("simpler_init", CONTEXT_BUSY_CODE, self.device)
        card.runtime = runtime
        card.users += 1
        self.runtime, self._card = runtime, card

    def register(self, kernel: str) -> int:
        if kernel not in KERNELS:
            raise KeyError(f"no kernel {kernel!r} in chipsim (known: {', '.join(KERNELS)})")
        if kernel not in self._kernels:
            self._kernels.append(kernel)
        return self._kernels.index(kernel)

    def run(self, handle: int, *tensors: np.ndarray) -> np.ndarray:
        card = self._card
        if card is None or card is not cards.card(self.device) or card.failing:
            # Never initialized, its context gone with a device reset, or a faulted card.
            raise ChipError("run", cards.FAULT_CODE, self.device)
        kernel = self._kernels[handle]
        if cards.fault_due(kernel):
            card.failing = True
            raise ChipError("run", cards.FAULT_CODE, self.device)
        return np.asarray(KERNELS[kernel](*tensors))

    def close(self) -> None:
        card, self._card = self._card, None
        if card is not None and card is cards.card(self.device):
            card.users -= 1
            if card.users == 0:
                card.runtime = None
