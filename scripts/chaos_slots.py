"""Chaos cells for slots above the device count: ``simpler run --device 0 -j 3``, one card and
three processes, where most tests use no device and a few use the pooled ``worker``.

- an xdist worker that holds no device killed by its own test (SIGKILL): that test fails,
  saying the worker crashed while running it, not poisoned (it used no device: no retry as a
  device victim), named in the summary; every other test passed, none lost, none re-run;
- SIGTERM to the run while the card's test and a device-free test block in the L2 session
  (the device-free one having started a process it abandons): exit 143, the summary
  printed, the tests without a verdict counted as not run, none failed, the abandoned
  process stopped with the rest;
- ``--deadline`` under ``--isolate file`` while the card's file and a device-free file block
  side by side: exit 1, ``deadline ... reached: N not run``, the blocked files stopped, their
  tests counted as not run, none failed;
- SIGTERM while the Resource phase runs on the card the L2 session freed and a device-free L2
  test still blocks: exit 143, each phase started and ended once, both interrupted, the
  blocked tests not run;
- a device-free L2 worker killed after the card was handed to the Resource phase: its test
  fails, its replacement holds no device, the Resource test passed.

Every run is a real ``simpler run --platform a5sim --device 0 -j 3`` in a folder of its own,
on a suite this module writes there (its own root, report and learned durations); each must
end with its verdict line and the exit code the line says, and leave no process behind. A
test that blocks touches a file when it starts (the cell polls for it, never sleeps a fixed
time) and waits for a file that never appears, for a minute at most.
``scripts/chaos.py --only slots`` runs :func:`slots_cells` and prints each cell.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from chaos_cells import Cell, guarded
from chaos_isolation import Run, Started, finish_run, not_run_counted

from simpler.reporting.report_file import read_contents

__all__ = ["slots_cells"]

SLOTS, DEVICE = "3", "0"  # three processes, one card
DEADLINE = "10s"  # tests must end 3 s before it; the blocked ones would take a minute
_INHERITED = ("SIMPLER_", "COVERAGE_")  # a report, plan, fault or deadline of the caller's own
_KEPT = ("SIMPLER_OP_TIMEOUT_MS",)

# A test that blocks: marks its start in CHAOS_SLOTS_DIR, then waits a minute at most for a
# file that never appears (the signal or the deadline stops it long before). With
# CHAOS_SLOTS_HELPER=1 the device-free one first starts a process it abandons (a session of
# its own, a minute's life): the run must stop it, as it stops its own processes.
_BLOCK = """
import os, subprocess, sys, time
from pathlib import Path


def _block(name):
    here = Path(os.environ["CHAOS_SLOTS_DIR"])
    if name == "free" and os.environ.get("CHAOS_SLOTS_HELPER") == "1":
        wait = "import time; time.sleep(60)"
        subprocess.Popen([sys.executable, "-c", wait, "chaos-slots-helper"],
                         start_new_session=True)
    (here / f"{name}.started").touch()
    end = time.monotonic() + 60
    while not (here / "never").exists() and time.monotonic() < end:
        time.sleep(0.05)
"""
_QUICK = """
def test_free_1():
    pass


def test_free_2():
    pass


def test_free_3():
    pass
"""
CRASH_SUITE = {
    "test_card.py": """
        def test_on_card(worker):
            worker.run("noop")


        def test_on_card_again(worker):
            worker.run("noop")
        """,
    "test_mixed.py": """
        import os, signal


        def test_before():
            pass


        def test_kills_its_worker():
            os.kill(os.getpid(), signal.SIGKILL)  # the xdist worker: it holds no device


        def test_after():
            pass


        def test_on_card_here(worker):
            worker.run("noop")
        """,
    "test_quick.py": _QUICK,
}
CRASH = "tests/test_mixed.py::test_kills_its_worker"
BLOCK_SUITE = {
    "test_card_block.py": _BLOCK
    + """

def test_on_card(worker):
    worker.run("noop")


def test_card_blocks(worker):
    _block("card")


def test_card_after(worker):
    worker.run("noop")
""",
    "test_free_block.py": _BLOCK
    + """

def test_free_blocks():
    _block("free")


def test_free_after():
    pass
""",
    "test_quick.py": _QUICK,
}
BLOCKED = {  # the tests that block, and those behind them: never a verdict of their own
    "tests/test_card_block.py::test_card_blocks",
    "tests/test_card_block.py::test_card_after",
    "tests/test_free_block.py::test_free_blocks",
    "tests/test_free_block.py::test_free_after",
}
GREEN_BEFORE = {"tests/test_card_block.py::test_on_card"} | {
    f"tests/test_quick.py::test_free_{n}" for n in (1, 2, 3)
}

# The card's L2 test, a device-free L2 test that waits for the Resource phase to start (and
# then blocks, or kills its own worker), and the Resource test.
_WAIT_FOR_RESOURCE = """
import os, signal, time
from pathlib import Path


def _resource_started():
    here = Path(os.environ["CHAOS_SLOTS_DIR"])
    end = time.monotonic() + 60
    while not (here / "resource.started").exists():
        assert time.monotonic() < end, "the Resource phase waited for the L2 session"
        time.sleep(0.05)
"""
HANDOVER_SUITE = {
    "test_card.py": """
        def test_on_card(worker):
            worker.run("noop")
        """,
    "test_free_block.py": _BLOCK
    + _WAIT_FOR_RESOURCE
    + """

def test_free_blocks():
    _resource_started()
    _block("free")
""",
    "test_resource_block.py": _BLOCK
    + """
import pytest


@pytest.mark.device_count(1)
def test_resource_blocks():
    _block("resource")
""",
    "test_quick.py": _QUICK,
}
HANDOVER_BLOCKED = {
    "tests/test_free_block.py::test_free_blocks",
    "tests/test_resource_block.py::test_resource_blocks",
}
HANDOVER_CRASH_SUITE = {
    "test_card.py": HANDOVER_SUITE["test_card.py"],
    "test_free_crash.py": _WAIT_FOR_RESOURCE
    + """

def test_kills_its_worker_after_the_handover():
    _resource_started()
    os.kill(os.getpid(), signal.SIGKILL)  # an xdist worker of no device, after the handover


def test_after_the_crash():
    pass
""",
    "test_resource.py": """
        import os
        from pathlib import Path

        import pytest


        @pytest.mark.device_count(1)
        def test_resource():
            (Path(os.environ["CHAOS_SLOTS_DIR"]) / "resource.started").touch()
        """,
    "test_quick.py": _QUICK,
}
HANDOVER_CRASH = "tests/test_free_crash.py::test_kills_its_worker_after_the_handover"

Record = dict[str, Any]


def slots_cells(workdir: Path) -> list[Cell]:
    folder = workdir / "slots"
    folder.mkdir(parents=True, exist_ok=True)
    cells = (
        _crashed_device_free_worker,
        _sigterm_mid_l2,
        _deadline_isolated,
        _sigterm_mid_handover,
        _crash_after_handover,
    )
    return [guarded("slots", cell, folder) for cell in cells]


def _suite(folder: Path, name: str, files: dict[str, str]) -> Path:
    """A project of its own: ``tests/`` holding ``files``, and a pytest.ini at its root."""
    root = folder / name
    (root / "tests").mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    for file, body in files.items():
        (root / "tests" / file).write_text(textwrap.dedent(body).lstrip("\n"))
    return root


def _start(root: Path, *args: str, **suite_env: str) -> Started:
    """``simpler run`` on one card and three slots over ``root``'s suite, ``args`` after its own."""
    report = root / "report.jsonl"
    run_id = f"chaos-slots-{secrets.token_hex(4)}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(_INHERITED) or k in _KEPT}
    env |= {"SIMPLER_RUN_ID": run_id, "SIMPLER_LOCK_DIR": str(root / "locks"),
            "CHAOS_SLOTS_DIR": str(root), **suite_env}  # fmt: skip
    argv = [sys.executable, "-m", "simpler", "run", "--platform", "a5sim",
            "--device", DEVICE, "-j", SLOTS, "--report", str(report),
            *args, "--", "tests"]  # fmt: skip
    at = time.monotonic()
    process = subprocess.Popen(
        argv, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    return Started(process, report, run_id, at)


def _cell(name: str, run: Run, seen: str) -> Cell:
    ok = not run.problems
    return name, ok, seen if ok else "; ".join(run.problems)[:300]


def _tests(run: Run) -> list[Record]:
    return [r for r in run.records() if r.get("type") == "test"]


def _l2_end(run: Run) -> Record:
    ends = [r for r in run.records() if r.get("phase") == "l2" and r.get("event") == "end"]
    return ends[-1] if ends else {}


def _one_card_three_slots(run: Run, *, exact: bool) -> None:
    """The card's tests on device 0 in the one process that holds it; the L2 phase ran three
    processes (``exact``) or at least two at once, and says so in its summary line."""
    on_card = [t for t in _tests(run) if t.get("device") is not None]
    run.expect(bool(on_card), "no test ran on the card")
    run.expect({t["device"] for t in on_card} <= {0}, f"card tests on {on_card}")
    run.expect(len({t.get("pid") for t in on_card}) == 1, "the card's tests in several processes")
    end = _l2_end(run)
    slots = end.get("slots") or 0
    run.expect(slots == 3 if exact else slots >= 2, f"l2 end: slots {slots}")
    run.expect(end.get("devices") == [0], f"l2 end: devices {end.get('devices')}")
    line = f"{slots} processes, device 0)"
    run.expect(any(s.startswith("l2: ") and s.endswith(line) for s in run.out.splitlines()),
               f"no 'l2: ... {line}' summary line")  # fmt: skip


def _not_run_counted(run: Run, reason: str) -> int:
    """As every early end's (``not_run_counted``), and the blocked tests among the not run,
    the quick ones passed, the not-run block printed."""
    said = not_run_counted(run, reason.format(n=len(run.not_run())))
    if said < 0:
        return said
    run.expect(set(run.not_run()) >= BLOCKED, f"not run: {sorted(run.not_run())}")
    outcomes = run.outcomes()
    run.expect(set(outcomes.values()) <= {"passed"}, f"verdicts {outcomes}")
    run.expect(all(outcomes.get(n) == "passed" for n in GREEN_BEFORE), f"verdicts {outcomes}")
    run.expect(f"*** {said} planned test(s) not run" in run.out, "the not-run block is missing")
    return said


def _crashed_device_free_worker(folder: Path) -> Cell:
    """A device-free test SIGKILLs its own xdist worker: its failure only, no retry."""
    name = "slots: crashed device-free worker"
    root = _suite(folder, "crash", CRASH_SUITE)
    run = finish_run(_start(root), 1)
    tests = _tests(run)
    crash = [t for t in tests if t.get("nodeid") == CRASH]
    run.expect(len(crash) == 1, f"{len(crash)} record(s) of the crashed test: re-run?")
    record = crash[0] if crash else {}
    run.expect(record.get("outcome") == "failed", f"crashed test: {record.get('outcome')}")
    said = f"crashed while running {CRASH}"
    run.expect(said in record.get("message", ""), f"message {record.get('message')!r}")
    run.expect(record.get("poisoned") is False, "the crash of a device-free test poisoned")
    run.expect(record.get("phase") == "l2", f"crashed test's record in {record.get('phase')}")
    planned = [n for r in run.records() if r.get("event") == "start" for n in r.get("planned", ())]
    others = [n for n in dict.fromkeys(planned) if n != CRASH]
    run.expect(len(others) == 8, f"planned {planned}")
    lost = [n for n in others if [t.get("outcome") for t in tests if t.get("nodeid") == n]
            != ["passed"]]  # fmt: skip
    run.expect(not lost, f"not exactly one pass: {lost}")
    verdict = run.verdict()
    run.expect(verdict is not None and verdict[:3] == (8, 1, 0), f"verdict {run.last[-100:]!r}")
    run.expect(f"1) {CRASH}: failed, worker gw" in run.out, "the crashed test is not named")
    _one_card_three_slots(run, exact=True)
    return _cell(name, run, f"1 failed ({said.split(' while')[0]}), {len(others)} passed; "
                 f"exit {run.rc}")  # fmt: skip


def _wait_until_blocked(started: Started, root: Path) -> bool:
    """The quick tests' records written while the card's test and a device-free one both
    block (three processes busy on one card): the report and the marks polled, a minute at
    most."""
    give_up = time.monotonic() + 60
    while time.monotonic() < give_up and started.process.poll() is None:
        if all((root / f"{m}.started").exists() for m in ("card", "free")):
            records = read_contents(started.report).records if started.report.exists() else []
            if {r.get("nodeid") for r in records if r.get("type") == "test"} >= GREEN_BEFORE:
                return True
        time.sleep(0.05)
    return False


def _sigterm_mid_l2(folder: Path) -> Cell:
    """SIGTERM while the L2 session's card process and a device-free process both block, the
    device-free test having abandoned a process of its own that the run must stop."""
    name = "slots: SIGTERM mid-L2 session"
    root = _suite(folder, "sigterm", BLOCK_SUITE)
    started = _start(root, CHAOS_SLOTS_HELPER="1")
    blocked = _wait_until_blocked(started, root)
    started.process.send_signal(signal.SIGTERM)
    signalled = time.monotonic()
    run = finish_run(started, 143)
    run.expect(blocked, "the quick tests never passed while the card's and a free test blocked")
    said = _not_run_counted(run, "interrupted by SIGTERM")
    run.expect(any(line.startswith("simpler summary: run ") for line in run.out.splitlines()),
               "no summary printed")  # fmt: skip
    _one_card_three_slots(run, exact=True)
    after = started.at + run.wall_s - signalled
    run.expect(after < 15, f"ended {after:.1f}s after the signal")
    return _cell(name, run, f"{said} not run; ended {after:.1f}s after SIGTERM; exit {run.rc}")


def _deadline_isolated(folder: Path) -> Cell:
    """``--isolate file``: the card's file and a device-free file block side by side until the
    deadline stops them."""
    name = "slots: deadline, --isolate file"
    root = _suite(folder, "deadline", BLOCK_SUITE)
    run = finish_run(_start(root, "--isolate", "file", "--deadline", DEADLINE), 1)
    both = [m for m in ("card", "free") if (root / f"{m}.started").exists()]
    run.expect(len(both) == 2, f"only {both} blocked: the files never ran side by side")
    said = _not_run_counted(run, f"deadline {DEADLINE} reached: {{n}} not run")
    stopped = [s for s in run.out.splitlines() if s.startswith("STOP  tests/test_")]
    run.expect(len(stopped) == 2, f"stopped units: {stopped}")
    run.expect(_l2_end(run).get("deadline") == f"deadline {DEADLINE} reached",
               f"l2 end: {_l2_end(run).get('deadline')}")  # fmt: skip
    _one_card_three_slots(run, exact=False)
    limit = float(DEADLINE.rstrip("s"))
    run.expect(run.wall_s <= limit + 0.5, f"ended after {run.wall_s:.1f}s of {DEADLINE}")
    return _cell(name, run, f"{said} not run, {len(stopped)} files stopped; ended at "
                 f"{run.wall_s:.1f}s of {DEADLINE}; exit {run.rc}")  # fmt: skip


def _phases_once(run: Run) -> dict[tuple[str, str], Record]:
    """Each phase's start and end record, each written exactly once."""
    marks = [(r.get("phase"), r.get("event")) for r in run.records() if r.get("type") == "phase"]
    twice = {mark for mark in marks if marks.count(mark) > 1}
    run.expect(not twice, f"phase records written twice: {sorted(twice)}")
    return {(r["phase"], r["event"]): r for r in run.records() if r.get("type") == "phase"}


def _sigterm_mid_handover(folder: Path) -> Cell:
    """SIGTERM while the Resource phase's test blocks on the card the L2 session freed, and a
    device-free L2 test blocks beside it: both phases stop, once each."""
    name = "slots: SIGTERM mid-Resource beside L2"
    root = _suite(folder, "handover-sigterm", HANDOVER_SUITE)
    started = _start(root)
    give_up = time.monotonic() + 60
    marks = [root / "free.started", root / "resource.started"]
    while time.monotonic() < give_up and started.process.poll() is None:
        if all(mark.exists() for mark in marks):
            break
        time.sleep(0.05)
    overlapped = all(mark.exists() for mark in marks)
    started.process.send_signal(signal.SIGTERM)
    run = finish_run(started, 143)
    run.expect(overlapped, "the Resource test never ran while the L2 session did")
    phases = _phases_once(run)
    for phase in ("l2", "resource"):
        end = phases.get((phase, "end"), {})
        run.expect(end.get("interrupted") == "SIGTERM", f"{phase} end: {end}")
    said = not_run_counted(run, "interrupted by SIGTERM")
    run.expect(set(run.not_run()) >= HANDOVER_BLOCKED, f"not run: {sorted(run.not_run())}")
    outcomes = run.outcomes()
    run.expect(set(outcomes.values()) <= {"passed"}, f"verdicts {outcomes}")
    return _cell(name, run, f"{said} not run, both phases interrupted once; exit {run.rc}")


def _crash_after_handover(folder: Path) -> Cell:
    """A device-free L2 worker SIGKILLed once the card went to the Resource phase: its test
    fails, and the worker that replaces it holds no device."""
    name = "slots: crash after the card's handover"
    root = _suite(folder, "handover-crash", HANDOVER_CRASH_SUITE)
    run = finish_run(_start(root), 1)
    _phases_once(run)
    outcomes = run.outcomes()
    run.expect(outcomes.get(HANDOVER_CRASH) == "failed", f"verdicts {outcomes}")
    others = {n: o for n, o in outcomes.items() if n != HANDOVER_CRASH}
    run.expect(len(others) == 6 and set(others.values()) == {"passed"}, f"verdicts {outcomes}")
    after = [t for t in _tests(run) if t.get("nodeid", "").endswith("test_after_the_crash")]
    run.expect(len(after) == 1 and after[0].get("device") is None,
               f"the replacement's test: {after}")  # fmt: skip
    (crash,) = [t for t in _tests(run) if t.get("nodeid") == HANDOVER_CRASH] or [{}]
    run.expect(crash.get("poisoned") is False, "the crash of a device-free test poisoned")
    verdict = run.verdict()
    run.expect(verdict is not None and verdict[:3] == (6, 1, 0), f"verdict {run.last[-100:]!r}")
    return _cell(name, run, f"1 failed after the handover, 6 passed; exit {run.rc}")
