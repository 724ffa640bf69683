"""The phases of a run, in order: l2 -> resource -> retry -> report.

Each phase is a function of the run's context that returns an exit code; ``run_phases``
brackets each with ``phase`` records, runs the later ones even after a failure (a signal
skips the test phases left) and hands what they decided to the report as the run's ruling
(docs/architecture.md, "A run, step by step").
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from collections.abc import Callable

from simpler.contract import EXIT_FAILED, EXIT_INFRA, EXIT_OK, EXIT_USAGE, SELECTING_PHASES
from simpler.orchestrator.context import RunContext
from simpler.orchestrator.deadline_fit import warn_if_too_long
from simpler.orchestrator.l2 import l2_phase
from simpler.orchestrator.leftovers import guarded_run
from simpler.orchestrator.report_phase import report_phase
from simpler.orchestrator.resource import resource_phase
from simpler.orchestrator.retry import retry_phase
from simpler.orchestrator.run_coverage import run_record
from simpler.orchestrator.run_history import import_run
from simpler.orchestrator.signals import Interrupted
from simpler.reporting.records import ChildRecord, PhaseRecord, Record, SessionRecord, TestRecord
from simpler.reporting.summary import Ruling

__all__ = ["PHASES", "run_phases"]

PHASES: dict[str, Callable[[RunContext], int]] = {
    "l2": l2_phase,
    "resource": resource_phase,
    "retry": retry_phase,
    "report": report_phase,
}


def run_phases(ctx: RunContext, phases: list[str]) -> int:
    """Run ``phases`` in order; the report's exit code when it ran, else the worst phase's.

    A usage error (the same in every later phase) or an interruption skips the test phases
    left, never the report; an infrastructure failure (exit 3) outranks the report's verdict.
    """
    setup = ctx.setup
    results: dict[str, int] = {}
    interrupted: Interrupted | None = None
    if setup.coverage is not None:
        ctx.write(run_record(ctx, setup.coverage))
    if setup.deadline is not None:
        warn_if_too_long(setup, phases)
    if (setup.resource_tests and "resource" in phases) or (setup.isolate and "l2" in phases):
        ctx.children.start(dict(os.environ))  # its preloads overlap the L2 phase
    with guarded_run(ctx) as guard:
        ctx.state.when_devices_free = _resource_when_devices_free(ctx, phases, results)
        for name in phases:
            if name in results:
                continue  # the Resource phase ran while the L2 session ended
            try:
                stopped_by = _stopped_by(ctx, results, interrupted)
                if stopped_by is not None and name != "report":
                    _not_started(ctx, name, stopped_by)  # its tests are counted as not run
                    continue
                if name == "report":
                    ctx.children.close()  # the warm process ends with the tests
                    guard.tests_over()  # every child stopped, every leftover killed and recorded
                    ctx.state.ruling = _ruling(results, interrupted or guard.interrupted)
                results[name] = _bracketed(ctx, name, PHASES[name])
                if name == "l2":
                    ctx.state.when_devices_free = None  # the session is over: no handover now
            except Interrupted as stop:  # in a phase, or between two of them
                interrupted = interrupted or stop
                print(f"simpler: interrupted by {stop}; children stopped", file=sys.stderr)
                if name not in results and name != "report":
                    _not_started(ctx, name, f"interrupted by {stop}")
                results.setdefault(name, EXIT_FAILED)
        ctx.children.close()
    late = guard.interrupted if interrupted is None else None  # came during the report
    ruling = _ruling(results, interrupted or late)
    ruled = ctx.state.ruling
    told = ruled is not None and late is not None and ruled.code == late.exit_code
    if late is not None and "report" in results and not told:
        # The verdict line is printed already: the last line must still say what we return.
        print(f"simpler: interrupted by {late} after the summary -> exit {late.exit_code}")
    code = (
        ruling.code
        if ruling is not None
        else results.get("report", max(results.values(), default=EXIT_OK))
    )
    return import_run(ctx, code) if "report" in results else code


def _resource_when_devices_free(
    ctx: RunContext, phases: list[str], results: dict[str, int]
) -> Callable[[], None] | None:
    """The Resource phase, to start as soon as the L2 session frees the devices (while it
    ends, docs/running.md); None where the Resource phase does not follow L2 or has no test.

    It is bracketed as always, its result is the phase's, and the loop then skips it. Started
    only if nothing has stopped the test phases by then (the deadline): else the loop says why.
    """
    if not ctx.setup.resource_tests or not {"l2", "resource"} <= set(phases):
        return None
    if phases.index("resource") != phases.index("l2") + 1:
        return None
    if ctx.setup.isolate is not None:
        return None  # an isolated L2 phase is no session: its units lock devices one by one

    def start() -> None:
        ctx.state.when_devices_free = None
        if _stopped_by(ctx, results, None) is not None:
            return
        try:
            results["resource"] = _bracketed(ctx, "resource", PHASES["resource"])
        except Interrupted:
            results["resource"] = EXIT_FAILED
            raise
        finally:
            ctx.state.current_phase = "l2"  # the session's phase goes on

    return start


def _ruling(results: dict[str, int], interrupted: Interrupted | None) -> Ruling | None:
    """The exit code the run has whatever the summary finds: an interruption (128 + the
    signal), then an infrastructure failure (3), then a usage error (2)."""
    if interrupted is not None:
        return Ruling(interrupted.exit_code, f"interrupted by {interrupted}")
    for code, what in ((EXIT_INFRA, "infrastructure failure"), (EXIT_USAGE, "usage error")):
        phases = [name for name, result in results.items() if result == code]
        if phases:
            return Ruling(code, f"{what} in phase {', '.join(phases)}")
    return None


def _stopped_by(
    ctx: RunContext, results: dict[str, int], interrupted: Interrupted | None
) -> str | None:
    """Why the test phases left do not start: an interruption, a usage error (the same in
    every later phase), or the deadline; None: they start."""
    if interrupted is not None:
        return f"interrupted by {interrupted}"
    usage = [name for name, code in results.items() if code == EXIT_USAGE]
    if usage:
        return f"usage error in phase {usage[0]}"
    deadline = ctx.setup.deadline
    return deadline.reason if deadline is not None and deadline.reached else None


def _not_started(ctx: RunContext, name: str, why: str) -> None:
    """A test phase that never started still says what it was to run, so the summary counts
    its tests as not run (and names why) instead of forgetting them."""
    if name == "retry" or (ctx.state.current_phase == name and name in SELECTING_PHASES):
        return  # the retry's tests are the others' (none planned); a started phase wrote its own
    ctx.state.current_phase = name
    ctx.write(_start(ctx, name))
    deadline = why if ctx.setup.deadline is not None and why == ctx.setup.deadline.reason else None
    ctx.write(ctx.record(PhaseRecord, event="end", counts={}, returncode=None, duration_s=0.0,
                         not_started=why, deadline=deadline))  # fmt: skip


def _start(ctx: RunContext, name: str) -> PhaseRecord:
    """The start record of the phase ``name`` (the current one): a test phase's says what it is
    to run, when the suite was listed up front (completeness.py)."""
    setup = ctx.setup
    start = ctx.record(PhaseRecord, event="start", shard=setup.shard, platform=setup.platform)
    resource, l2_tests = setup.resource_tests, setup.l2_tests
    if l2_tests is None or resource is None or name not in SELECTING_PHASES:
        return start
    selected = len(l2_tests) + len(resource)
    if name == "resource":
        return start.replace(planned=[t.nodeid for t in resource], selected=selected)
    plain = [n for n in l2_tests if n in setup.l2_plain]
    start = start.replace(planned=list(l2_tests), no_device=plain, selected=selected)
    return start if setup.affected is None else start.replace(affected=setup.affected)


def _devices_used(records: list[Record]) -> list[int]:
    """The devices a phase's tests ran on: a pooled test's, a child's allocation."""
    used = {r.device for r in records if isinstance(r, TestRecord) and r.device is not None}
    for record in records:
        if isinstance(record, ChildRecord):
            used.update(record.devices)
    return sorted(used)


def _bracketed(ctx: RunContext, name: str, phase: Callable[[RunContext], int]) -> int:
    ctx.state.current_phase = name
    ctx.write(_start(ctx, name))
    started = time.monotonic()
    returncode, interrupted, crash = EXIT_FAILED, None, None
    try:
        returncode = phase(ctx)
    except Interrupted as stop:
        interrupted = stop
    except Exception as error:  # a bug or a broken machine: one line, and the run goes on
        crash = f"{type(error).__name__}: {error}"
        print(f"simpler: phase {name} failed inside simpler: {crash}", file=sys.stderr)
        returncode = EXIT_INFRA
    records = [r for r in ctx.records() if r.phase == name]
    counts = Counter(r.outcome for r in records if isinstance(r, TestRecord))
    if any(isinstance(r, SessionRecord) and r.deadline_held_back for r in records):
        ctx.state.cut_by_deadline.add(name)  # the plugin held tests back: the deadline cut it
    end = ctx.record(
        PhaseRecord,
        event="end",
        counts=dict(counts),
        returncode=returncode,
        duration_s=round(time.monotonic() - started, 3),
        interrupted=str(interrupted) if interrupted else None,
        error=crash,
        deadline=_cut_by_deadline(ctx, name),
        children=ctx.children.how if ctx.children.started_any else None,
        slots=ctx.state.phase_slots.get(name),
        devices=_devices_used(records),
    )
    ctx.write(end)
    if interrupted is not None:
        raise interrupted
    return returncode


def _cut_by_deadline(ctx: RunContext, name: str) -> str | None:
    """Why the deadline cut phase ``name`` short, for its end record; None when it did not."""
    deadline = ctx.setup.deadline
    return deadline.reason if deadline and name in ctx.state.cut_by_deadline else None
