"""No process outlives a run: the run adopts orphans, and stops what is left when tests end.

:func:`guarded_run` brackets the phases: it installs the signal handler
(``simpler.orchestrator.signals``) and makes the orchestrator a child subreaper, so a
process a test started and abandoned (a detached ``Popen``, a daemon) is re-parented to
us. When the test phases are over (:meth:`RunGuard.tests_over`, before the summary) and
again on the way out, every child tree still alive is stopped together, then every other
descendant, and what was found goes into a ``leftover`` record:

``when`` (``tests_over`` or ``exit``) and ``processes``: a list of
``{pid, name, cmdline, test, signal}`` (``test``: the test that was running when the
process was started, when known; ``signal``: the one that ended it).

Only descendants are stopped, and only those the run started: a process that was already
below us when the run began (``run_phases`` called inside a longer-lived process) is spared.

A leftover is reported, not a failure (``simpler.reporting.notices`` words it above the
summary): the test's own verdict stands and the exit code stays the tests'. The process is
stopped either way, so nothing it holds outlives the run.
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
