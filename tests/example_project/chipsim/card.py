"""The simulated cards' state, one per device id, kept per process: a fresh process finds
every card clean, as a real card is after its process exits and the driver resets it.

Faults come from the environment and stand for what real cards do:

- ``CHIPSIM_FAULT=KERNEL``: the first run of KERNEL in a process fails with code 507899 and
  leaves the card failing every call until a device reset. Transient: only on a first
  attempt (``SIMPLER_ATTEMPT``, which ``simpler run`` sets to 2 and up on its retries).
- ``CHIPSIM_RESET=broken``: a device reset fails with code 507033 and changes nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from chipsim.errors import ChipError

__all__ = ["FAULT_CODE", "RESET_FAILED_CODE", "Card", "card", "fault_due", "healthy", "reset"]

FAULT_CODE = 507899
RESET_FAILED_CODE = 507033


@dataclass
class Card:
    failing: bool = False
    runtime: str | None = None  # the runtime loaded into the device context, if any
    users: int = 0  # workers open on the context


_cards: dict[int, Card] = {}
_faults_fired: set[str] = set()


def card(device: int) -> Card:
    return _cards.setdefault(device, Card())


def healthy(device: int) -> bool:
    return not card(device).failing


def reset(device: int) -> None:
    """A device reset: the card clean, its context (and every worker open on it) gone."""
    if os.environ.get("CHIPSIM_RESET") == "broken":
        raise ChipError("device_reset", RESET_FAILED_CODE, device)
    _cards[device] = Card()


def fault_due(kernel: str) -> bool:
    """The injected fault fires now: its kernel, a first attempt, not yet fired here."""
    first_attempt = os.environ.get("SIMPLER_ATTEMPT", "1") == "1"
    if os.environ.get("CHIPSIM_FAULT") != kernel or not first_attempt or kernel in _faults_fired:
        return False
    _faults_fired.add(kernel)
    return True
