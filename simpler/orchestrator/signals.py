"""SIGTERM and Ctrl-C during a run: stop every child, then report what finished."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from simpler.scheduler.process import LIVE

__all__ = ["Interrupted", "signals_raise_interrupted"]


class Interrupted(Exception):
    """The orchestrator got SIGTERM or SIGINT: stop the children, report what finished."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


@contextmanager
def signals_raise_interrupted() -> Iterator[None]:
    def interrupt(signum: int, _frame: FrameType | None) -> None:
        LIVE.stop_all()
        raise Interrupted(signum)

    previous = {s: signal.signal(s, interrupt) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        LIVE.stop_all()  # no process outlives the run
        for signum, handler in previous.items():
            signal.signal(signum, handler)
