"""What poisons a worker: the type of the error and what the card says, never message text."""

from __future__ import annotations

from simpler.errors import DeviceRuntimeError

__all__ = ["poisons_worker"]


def poisons_worker(error: BaseException | None, card_clean: bool) -> bool:
    """True when the worker must be reset before it runs another test.

    A ``DeviceRuntimeError`` always poisons; so does a card that fails its probe,
    even after a passing test (a test may expect a hang and catch it). A golden
    mismatch or any other assertion on a clean card leaves the worker healthy.
    """
    return isinstance(error, DeviceRuntimeError) or not card_clean
