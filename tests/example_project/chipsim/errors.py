"""The project's error type: every failed device call raises it."""

from __future__ import annotations

__all__ = ["ChipError"]


class ChipError(RuntimeError):
    """A failed device call: which API failed (``api``) and the code it returned (``code``)."""

    def __init__(self, api: str, code: int, device: int) -> None:
        super().__init__(f"{api} failed with code {code}")
        self.api = api
        self.code = code
        self.device = device
