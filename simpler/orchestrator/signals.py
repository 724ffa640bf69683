"""SIGTERM and Ctrl-C during a run: the handler notes the signal and stops the phase loop.

That is all the handler does: it records the first signal and raises :class:`Interrupted`
once, so the phase that runs stops where it is. Stopping children happens outside the
handler: a child whose waiter is interrupted is stopped on the way out of its wait, and
the run's guard (``simpler.orchestrator.leftovers``) stops every tree still alive, all of
them together. Once the tests are over the handler only records: the summary must print.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["Interrupted", "RunSignals", "signals_raise_interrupted"]

HANDLED = (signal.SIGTERM, signal.SIGINT)


class Interrupted(Exception):
    """The orchestrator got SIGTERM or SIGINT: stop the children, report what finished."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)

    @property
    def exit_code(self) -> int:
        """The shell's convention: 130 for SIGINT, 143 for SIGTERM (docs/design.md, Exit codes)."""
        return 128 + self.signum


class RunSignals:
    """What the handler saw, and whether it may still stop the phase that runs."""

    def __init__(self) -> None:
        self.received: int | None = None  # the first signal
        self.raising = True

    def handle(self, signum: int, _frame: FrameType | None) -> None:
        first = self.received is None
        if first:
            self.received = signum
        # Only the first one stops the phase: a second Ctrl-C must not cut the cleanup short.
        if first and self.raising:
            raise Interrupted(signum)

    def stop_raising(self) -> None:
        """From now on a signal is recorded, never raised (the tests are over)."""
        self.raising = False

    @property
    def interrupted(self) -> Interrupted | None:
        return Interrupted(self.received) if self.received is not None else None


@contextmanager
def signals_raise_interrupted() -> Iterator[RunSignals]:
    state = RunSignals()
    previous = {s: signal.signal(s, state.handle) for s in HANDLED}
    try:
        yield state
    finally:
        state.stop_raising()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
