"""The L2 phase: one pytest session over the run's slots, the devices apart.

``-j N`` slots (the CPU count by default) are xdist workers; the first of them, one per
device, hold a device each (``gwN`` -> a device of its own), the rest hold none. Told which
tests use no device (the up-front collection's), the session's scheduler sends the tests
that use the pooled worker only to a worker that holds a device, and the rest anywhere: on one
card and eight cores the card's tests run one at a time while seven processes run the others.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from simpler.base.nodeids import file_of
from simpler.contract import EXIT_OK
from simpler.orchestrator.context import RunContext
from simpler.orchestrator.device_handover import devices_handover
from simpler.orchestrator.isolated import isolated_l2_phase
from simpler.orchestrator.pytest_args import (
    AUTO_WORKERS,
    l2_user_args,
    l2_xdist_flags,
    pytest_argv,
)
from simpler.orchestrator.pytest_run import l2_plugin_flags, phase_exit, run_pytest
from simpler.processes.locks import hold_devices
from simpler.reporting.records import TestRecord
from simpler.scheduler.durations import record_durations

__all__ = ["l2_phase", "l2_workers"]


def l2_phase(ctx: RunContext) -> int:
    """The L2 tests: each file (or test) in a process of its own under ``--isolate``, else
    one session whose xdist workers fill the slots."""
    setup = ctx.setup
    if setup.l2_files is not None and not setup.l2_files:
        return EXIT_OK  # this shard's tests are all Resource tests
    if setup.isolate is not None and setup.l2_tests is not None:
        worst = isolated_l2_phase(ctx)
    else:
        worst = _session(ctx)
    _record_file_durations(ctx)
    return worst


def _session(ctx: RunContext) -> int:
    setup = ctx.setup
    workers = l2_workers(ctx)
    with _no_device_list(ctx) as no_device:
        extra = [*l2_plugin_flags(ctx), *no_device, *l2_xdist_flags(setup.pytest_args, workers)]
        user_args = l2_user_args(setup.pytest_args, workers, setup.l2_files)
        numprocesses = setup.pytest_args.numprocesses
        distributes = numprocesses != "0" if numprocesses is not None else workers > 1
        told = setup.child("l2", label="L2 pass", devices=setup.devices,
                          workers_only=distributes, deadline=True)  # fmt: skip
        ctx.state.phase_slots["l2"] = workers if distributes else 1
        waiting = ctx.state.when_devices_free if distributes else None
        with hold_devices(setup.devices) as locks, devices_handover(locks, waiting) as handover:
            handing = [handover.flag] if handover is not None else []
            argv = pytest_argv(*extra, *handing, *user_args)
            returncode = run_pytest(ctx, argv, told, distributes=distributes, handover=handover)
            return phase_exit(returncode)


def l2_workers(ctx: RunContext) -> int:
    """The session's xdist workers: the user's ``-n`` (``auto``: the slots), one under ``-x``
    or ``--maxfail``, else the slots, no more than its tests can use."""
    setup = ctx.setup
    if not setup.pytest_args.xdist:
        return 1  # -p no:xdist: one process, whatever the slots
    asked = setup.pytest_args.numprocesses
    if asked is not None and asked not in AUTO_WORKERS:
        return max(1, int(asked)) if asked.isdigit() else 1
    if asked is None and setup.pytest_args.maxfail:
        return 1  # -x/--maxfail: stop at the Nth failure in pytest's order, as pytest would
    tests = setup.l2_tests
    if tests is None:  # not collected up front: every test is taken to use a device
        return max(1, min(setup.slots, len(setup.devices)))
    # A worker per device as soon as any test uses one (a crashed worker's queue then has a
    # replacement beside it), and the slots left for the files of tests that use none.
    on_devices = len(setup.devices) if any(n not in setup.l2_plain for n in tests) else 0
    anywhere = len({file_of(n) for n in tests if n in setup.l2_plain})
    return max(1, min(setup.slots, on_devices + anywhere))


@contextmanager
def _no_device_list(ctx: RunContext) -> Iterator[list[str]]:
    """The flag that tells the session which tests use no device, and its file; none when the
    suite was not collected up front (then every test waits for a device)."""
    tests = ctx.setup.l2_tests
    if tests is None:
        yield []
        return
    with tempfile.TemporaryDirectory(prefix="simpler-l2-") as folder:
        listed = Path(folder) / "no-device-tests.txt"
        plain = [n for n in tests if n in ctx.setup.l2_plain]
        listed.write_text("".join(f"{n}\n" for n in plain), encoding="utf-8")
        yield [f"--simpler-no-device-tests={listed}"]


def _record_file_durations(ctx: RunContext) -> None:
    """What each L2 file took, so the next ``--shard`` split balances on it."""
    per_file: dict[str, float] = {}
    for record in ctx.records():
        if isinstance(record, TestRecord) and record.phase == "l2":
            key = f"file:{file_of(record.nodeid)}"
            per_file[key] = per_file.get(key, 0.0) + (record.duration_s or 0.0)
    record_durations(ctx.setup.durations_file, per_file.items())
