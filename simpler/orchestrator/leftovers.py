"""No process outlives a run: the run adopts orphans, and stops what is left when tests end.

:func:`guarded_run` installs the signal handler and makes the run a child subreaper; when the
tests are over (:meth:`RunGuard.tests_over`) and on the way out, every descendant the run
started is stopped and named in a ``leftover`` record, never a failure (docs/running.md,
"Nothing left behind").
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import Any

import psutil

from simpler.orchestrator.context import RunContext
from simpler.orchestrator.signals import Interrupted, RunSignals, signals_raise_interrupted
from simpler.processes.process import LIVE
from simpler.processes.reaper import child_subreaper, descendants, stop_leftovers
from simpler.reporting.notices import describe_leftovers
from simpler.reporting.records import LeftoverRecord

__all__ = ["RunGuard", "guarded_run", "sweep_leftovers"]


class RunGuard:
    """What ``run_phases`` holds while the phases run."""

    def __init__(self, ctx: RunContext, signals: RunSignals) -> None:
        self.ctx = ctx
        self.signals = signals
        self.before = set(descendants())  # not the run's to stop

    def tests_over(self) -> None:
        """Before the summary: no test runs any more, so nothing below us may either."""
        self.signals.stop_raising()
        LIVE.stop_all()
        sweep_leftovers(self.ctx, "tests_over", spare=self.before)

    @property
    def interrupted(self) -> Interrupted | None:
        """The signal the run got, even one that came too late to stop a phase."""
        return self.signals.interrupted


@contextmanager
def guarded_run(ctx: RunContext) -> Iterator[RunGuard]:
    with signals_raise_interrupted() as signals, child_subreaper():
        guard = RunGuard(ctx, signals)
        try:
            yield guard
        finally:
            signals.stop_raising()
            LIVE.stop_all()  # no process outlives the run
            found = sweep_leftovers(ctx, "exit", spare=guard.before)
            if found:
                print(f"simpler: {describe_leftovers(found)[0]}", file=sys.stderr, flush=True)


def sweep_leftovers(
    ctx: RunContext,
    when: str,
    *,
    spare: Collection[psutil.Process] = (),
) -> list[dict[str, Any]]:
    """Stop every descendant but ``spare`` and the children we still wait for; record them."""
    keep: set[int | psutil.Process] = {*spare, *LIVE.pids()}
    found = [leftover.as_dict() for leftover in stop_leftovers(keep=keep)]
    if found:
        try:
            ctx.write(ctx.record(LeftoverRecord, when=when, processes=found))
        except OSError as error:  # the summary (or the way out) must not fail for it
            print(f"simpler: {error}", file=sys.stderr)
    return found
