"""The event scenario_crash's neighbours wait on: a replacement xdist worker has started a test.

``test_worker_crash`` checks that the worker xdist starts in place of a crashed one runs a test,
on the dead worker's device. With ``--dist loadfile`` and two workers, one worker gets
scenario_crash.py and dies in it; the other gets a neighbour file. Had that survivor finished
its tests early, it would take every file left (the crashed worker's queued tests too) before
the replacement has started and collected. So, where the test asks for it (the folder in
``HANDOFF_ENV``, in the L2 phase only), a neighbour test on a first worker (gw0, gw1) holds
its worker until a test has started on a replacement (gw2 on), which leaves a file in that
folder. The survivor holding a test keeps 2+ tests pending in xdist's scheduler, so it takes
no new file, and the replacement gets the queue's next one.

A wait that outlives ``GUARD_S`` fails the test, and every later one at once, with the reason:
a hang guard, never a pause that is expected to pass.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

HANDOFF_ENV = "SIMPLER_IT_CRASH_HANDOFF"  # a folder; unset: no test waits or leaves a file
FIRST_WORKERS = {"gw0", "gw1"}  # the two xdist workers L2 starts on devices 0-1
GUARD_S = 30.0  # a replacement starts in seconds (~6s beside two CPU hogs); a failed run
# still ends well within test_worker_crash's TIMEOUT_S (120s), retry phase included
POLL_S = 0.05
GAVE_UP = "gave-up"


def _handoff() -> tuple[Path, str] | None:
    folder = os.environ.get(HANDOFF_ENV)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not folder or worker is None or os.environ.get("SIMPLER_PHASE") != "l2":
        return None
    return Path(folder), worker


def _started(folder: Path) -> list[Path]:
    return sorted(folder.glob("started-*"))


def announce() -> None:
    """On a replacement worker, say that it has started a test (a no-op elsewhere)."""
    handoff = _handoff()
    if handoff is not None and handoff[1] not in FIRST_WORKERS:
        folder, worker = handoff
        (folder / f"started-{worker}").touch()


def hold_until_a_replacement_started() -> None:
    """On gw0 or gw1, block until a replacement worker has started a test; there, announce."""
    handoff = _handoff()
    if handoff is None:
        return
    folder, worker = handoff
    if worker not in FIRST_WORKERS:
        announce()
        return
    reason = f"{worker}: no replacement xdist worker started a test within {GUARD_S:.0f}s"
    deadline = time.monotonic() + GUARD_S
    while not _started(folder):
        if (folder / GAVE_UP).exists():
            pytest.fail(f"{reason} (an earlier test gave up waiting)")
        if time.monotonic() > deadline:
            (folder / GAVE_UP).touch()
            pytest.fail(reason)
        time.sleep(POLL_S)  # polling the event, with the guard above


@pytest.mark.parametrize("step", range(4))
def busy_neighbour(worker: Any, step: int) -> None:
    """The neighbour files' one test (collected there as ``test_busy``): a launch, then the hold."""
    worker.run("noop")
    hold_until_a_replacement_started()
