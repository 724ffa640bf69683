"""Chaos cells for the ways a run ends early, and for ``--isolate``: what users read at the end.

- ``--deadline`` falling while Resource tests run: the run ends before its deadline with its
  summary, exit 1, the verdict names the deadline and counts, as not run, every planned test
  without a verdict; the children it stopped are no failed tests;
- SIGINT once every L2 verdict is written, before the Resource phase: exit 130, the Resource
  tests counted as not run (``resource: not started (interrupted by SIGINT)``), none failed;
- SIGTERM while an ``--isolate file`` unit's test runs: exit 143, the summary printed, that
  file's unrun tests counted as not run;
- a suite whose files contaminate one another: red in one process, green with
  ``--isolate file -j 2``;
- the warm process that children fork from killed by one of them: that child is named and
  runs once more in a fresh interpreter, the other Resource tests run in fresh interpreters,
  and the summary says how children started.

Every run is a real ``simpler run --platform a5sim --device 0-1`` in a copy of
``chaos_suite/iso_suite`` (its own root, report and learned durations); each must end with
its verdict line and the exit code the line says, and leave no process behind.
``scripts/chaos.py --only isolation`` runs :func:`isolation_cells` and prints each cell.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chaos_cells import Cell, guarded
from chaos_processes import no_leftovers

from simpler.orchestrator.deadline import REPORT_RESERVE_S
from simpler.reporting.records import from_dict
from simpler.reporting.report_file import read_contents
from simpler.reporting.summary import summarize

__all__ = ["isolation_cells"]

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "scripts" / "chaos_suite" / "iso_suite"
L2, RESOURCE, LONG = "test_iso_l2.py", "test_iso_resource.py", "test_iso_long.py"
SETS, FRESH = "test_iso_a_sets.py", "test_iso_b_fresh.py"
WARM = "test_iso_warm.py"
DEADLINE_S = 12  # the Resource phase starts 2-4 s in; its tests must end 3 s before this
WORK_S = 20  # each Resource workload under the deadline: far longer than the run may last
_VERDICT = re.compile(
    r"^simpler: (\d+) passed, .*, (\d+) failed(?:, \d+ errors?)?(?:, (\d+) not run)?"
    r" -> exit (\d+)(?: \((.*)\))?$"
)
_INHERITED = ("SIMPLER_", "COVERAGE_")  # a report, plan, fault or deadline of the caller's own
_KEPT = ("SIMPLER_OP_TIMEOUT_MS",)

Record = dict[str, Any]


@dataclass
class Run:
    """One ``simpler run`` in a copy of the suite, and what it left."""

    rc: int
    out: str
    report: Path
    wall_s: float
    problems: list[str] = field(default_factory=list)

    @property
    def last(self) -> str:
        lines = self.out.rstrip("\n").splitlines()
        return lines[-1] if lines else ""

    def last_screen(self) -> str:
        return "\n".join(self.out.rstrip("\n").splitlines()[-40:])

    def verdict(self) -> tuple[int, int, int, str] | None:
        """The verdict line's passed, failed and not run counts, and its reason (or '')."""
        found = _VERDICT.match(self.last)
        if found is None:
            return None
        return int(found[1]), int(found[2]), int(found[3] or 0), found[5] or ""

    def records(self) -> list[Record]:
        return read_contents(self.report).records if self.report.exists() else []

    def not_run(self) -> list[str]:
        """The planned tests (the test phases' start records) that got no verdict."""
        records = self.records()
        verdicts = summarize([from_dict(r) for r in records]).verdicts
        planned = [n for r in records if r.get("event") == "start" for n in r.get("planned", ())]
        return [n for n in dict.fromkeys(planned) if n not in verdicts]

    def outcomes(self) -> dict[str, str]:
        typed = [from_dict(r) for r in self.records()]
        return {n: v.outcome for n, v in summarize(typed).verdicts.items()}

    def expect(self, ok: bool, problem: str) -> None:
        if not ok:
            self.problems.append(problem)


def isolation_cells(workdir: Path) -> list[Cell]:
    folder = workdir / "isolation"
    folder.mkdir(parents=True, exist_ok=True)
    cells = (
        _deadline_mid_resource,
        _sigint_between_phases,
        _sigterm_isolated,
        _contamination,
        _warm_process_killed,
    )
    return [guarded("isolation", cell, folder) for cell in cells]


def _copy(folder: Path, name: str) -> Path:
    """A checkout of the suite of its own: its root is the run's root."""
    copy = folder / name
    shutil.copytree(SUITE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    return copy


@dataclass
class Started:
    process: subprocess.Popen[str]
    report: Path
    run_id: str
    at: float  # time.monotonic() just before the start


def _start(copy: Path, tag: str, *args: str, **env: str) -> Started:
    """``simpler run`` on two devices, ``args`` after its own; the suite's env vars in ``env``."""
    report = copy / tag / "report.jsonl"
    run_id = f"chaos-iso-{tag}-{secrets.token_hex(4)}"
    full = {k: v for k, v in os.environ.items() if not k.startswith(_INHERITED) or k in _KEPT}
    full |= {"CHAOS_ISOLATION": "1", "SIMPLER_RUN_ID": run_id, **env,
             "SIMPLER_LOCK_DIR": str(copy.parent / "locks")}  # fmt: skip
    argv = [sys.executable, "-m", "simpler", "run", "--platform", "a5sim", "--device", "0-1",
            "--report", str(report), *args]  # fmt: skip
    at = time.monotonic()
    process = subprocess.Popen(
        argv, cwd=copy, env=full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    return Started(process, report, run_id, at)


def finish_run(started: Started, expected_rc: int) -> Run:
    """Its end: the verdict line last, saying the exit code, and no process of it left."""
    try:
        out, _ = started.process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        started.process.kill()
        out, _ = started.process.communicate()
    run = Run(started.process.returncode, out, started.report, time.monotonic() - started.at)
    said = re.search(r" -> exit (\d+)", run.last)
    run.expect(said is not None and int(said[1]) == run.rc, f"last line {run.last[-100:]!r}")
    run.expect(run.rc == expected_rc, f"exit {run.rc}, expected {expected_rc}")
    notes: list[str] = []
    run.expect(no_leftovers(started.run_id, notes), "; ".join(notes))
    return run


def _run(copy: Path, tag: str, expected_rc: int, *args: str, **env: str) -> Run:
    return finish_run(_start(copy, tag, *args, **env), expected_rc)


def _cell(name: str, run: Run, seen: str) -> Cell:
    ok = not run.problems
    return name, ok, seen if ok else "; ".join(run.problems)[:300]


def not_run_counted(run: Run, reason: str) -> int:
    """The verdict line: none failed, the planned tests without a verdict counted, ``reason``."""
    verdict, not_run = run.verdict(), run.not_run()
    if verdict is None:
        run.expect(False, f"no verdict line: {run.last[-100:]!r}")
        return -1
    _, failed, said, why = verdict
    run.expect(failed == 0, f"{failed} failed: the stop counted as a failure")
    run.expect(said == len(not_run) > 0, f"{said} not run said, {len(not_run)} without a verdict")
    run.expect(why == reason, f"verdict reason {why!r}, expected {reason!r}")
    run.expect("Unrecovered failures" not in run.out, "a failure named in the summary")
    return said


def _deadline_mid_resource(folder: Path) -> Cell:
    """Resource workloads far longer than the run: the deadline stops them mid-phase."""
    name = "isolation: deadline mid-Resource phase"
    deadline = f"{DEADLINE_S}s"
    run = _run(_copy(folder, "deadline"), "run", 1, "--deadline", deadline, "--", L2, RESOURCE,
               CHAOS_ISO_WORK=str(WORK_S))  # fmt: skip
    said = not_run_counted(run, f"deadline {deadline} reached: {len(run.not_run())} not run")
    ends = {r.get("phase"): r for r in run.records() if r.get("event") == "end"}
    cut = ends.get("resource", {})
    run.expect(
        cut.get("deadline") == f"deadline {deadline} reached" and not cut.get("not_started"),
        f"resource phase not cut mid-phase by the deadline: {cut}",
    )
    stopped = re.findall(rf"^simpler: ({RESOURCE}::\S+): stopped at the deadline$", run.out, re.M)
    run.expect(bool(stopped), "no Resource test stopped at the deadline")
    run.expect(set(stopped) <= set(run.not_run()), f"stopped yet with a verdict: {stopped}")
    children = {r.get("nodeid") for r in run.records() if r.get("type") == "child"}
    run.expect(not children & set(stopped), "a stopped child recorded as a failed child")
    outcomes = run.outcomes()
    run.expect(
        all(outcomes.get(n) == "passed" for n in (f"{L2}::test_noop", f"{RESOURCE}::test_quick")),
        f"the quick tests: {outcomes}",
    )
    # The summary is printed by the deadline, the tests having used their time to its reserve.
    soonest = DEADLINE_S - REPORT_RESERVE_S - 1.5
    run.expect(soonest <= run.wall_s <= DEADLINE_S + 0.5, f"ended after {run.wall_s:.1f}s")
    seen = f"{said} not run, {len(stopped)} stopped; ended at {run.wall_s:.1f}s of {deadline}"
    return _cell(name, run, seen)


def _sigint_between_phases(folder: Path) -> Cell:
    """SIGINT from the L2 pass's pytest process once its session is over (every L2 verdict in,
    the Resource phase not started): the cell writes the orchestrator's pid (the process it
    started) to a file the suite's conftest reads at the session's end."""
    name = "isolation: SIGINT between phases"
    copy = _copy(folder, "sigint")
    pid_file = copy / "orchestrator.pid"
    started = _start(copy, "run", "--", L2, RESOURCE, CHAOS_ISO_SIGINT=str(pid_file))
    written = pid_file.with_suffix(".tmp")
    written.write_text(str(started.process.pid))
    written.replace(pid_file)  # whole or absent, never half-written when the conftest reads it
    run = finish_run(started, 130)
    said = not_run_counted(run, "interrupted by SIGINT")
    records = run.records()
    resource = [n for r in records if r.get("phase") == "resource" for n in r.get("planned", ())]
    run.expect(len(resource) == 4 and set(resource) <= set(run.not_run()),
               f"Resource tests {resource}, not run {run.not_run()}")  # fmt: skip
    run.expect(
        "resource: not started (interrupted by SIGINT)" in run.out.splitlines(),
        "no 'resource: not started (interrupted by SIGINT)' line",
    )
    ran = [r for r in records if r.get("phase") == "resource" and r.get("type") != "phase"]
    run.expect(not ran, f"{len(ran)} Resource record(s): the phase started")
    l2_left = len(run.not_run()) - len(resource)
    return _cell(name, run, f"{said} not run ({l2_left} of them L2); exit {run.rc}")


def _sigterm_isolated(folder: Path) -> Cell:
    """``--isolate file``: SIGTERM while a unit's long test runs (its start marked in a file)."""
    name = "isolation: SIGTERM in an isolated file"
    copy = _copy(folder, "sigterm")
    mark = copy / "long.started"
    started = _start(copy, "run", "--isolate", "file", "-j", "2", "--", L2, LONG,
                     CHAOS_ISO_MARK=str(mark))  # fmt: skip
    give_up = time.monotonic() + 60
    while not mark.exists() and time.monotonic() < give_up and started.process.poll() is None:
        time.sleep(0.1)
    time.sleep(0.3)
    started.process.send_signal(signal.SIGTERM)
    signalled = time.monotonic()
    run = finish_run(started, 143)
    run.expect(mark.exists(), "the long test never started")
    said = not_run_counted(run, "interrupted by SIGTERM")
    unrun = {f"{LONG}::test_long", f"{LONG}::test_after"}
    run.expect(unrun <= set(run.not_run()), f"not run: {run.not_run()}")
    run.expect(run.outcomes().get(f"{LONG}::test_first") == "passed", "test_first: no pass")
    run.expect(f"*** {said} planned test(s) not run" in run.out, "the not-run block is missing")
    after = started.at + run.wall_s - signalled
    run.expect(after < 15, f"ended {after:.1f}s after the signal")
    return _cell(name, run, f"{said} not run; ended {after:.1f}s after SIGTERM; exit {run.rc}")


def _contamination(folder: Path) -> Cell:
    """One file sets a process global, the next asserts it unset: red shared, green isolated."""
    name = "isolation: contamination"
    copy = _copy(folder, "contamination")
    shared = _run(copy, "shared", 1, "-j", "1", "--", SETS, FRESH)  # one process for L2
    isolated = _run(copy, "isolated", 0, "--isolate", "file", "-j", "2", "--", SETS, FRESH)
    shared.expect(
        "the process group is initialised twice" in shared.out, "the contamination never showed"
    )
    shared.expect(
        shared.outcomes().get(f"{FRESH}::test_initialises_it_again") == "failed",
        f"shared: {shared.outcomes()}",
    )
    expected = "simpler: 2 passed, 0 recovered, 0 flaky, 0 failed -> exit 0"
    isolated.expect(isolated.last == expected, f"verdict {isolated.last[-100:]!r}")
    shared.problems += [f"isolated: {p}" for p in isolated.problems]
    return _cell(name, shared, f"shared exit {shared.rc}, --isolate file -j 2 exit {isolated.rc}")


def _warm_process_killed(folder: Path) -> Cell:
    """A forked child kills the warm process (and dies of it): it is named, runs once more in
    a fresh interpreter, and every other Resource test runs in fresh interpreters too."""
    name = "isolation: warm process killed"
    copy = _copy(folder, "warm")
    run = _run(copy, "warm", 0, "--phases", "resource,report", "--new-run", "--",
               WARM, RESOURCE, CHAOS_ISO_KILL_WARM="1")  # fmt: skip
    outcomes = run.outcomes()
    run.expect(len(outcomes) == 5 and set(outcomes.values()) == {"passed"}, f"{outcomes}")
    run.expect("children start as fresh interpreters" in run.out, "the fallback was not said")
    run.expect("children: fresh interpreters (" in run.out, "the summary says no fallback")
    again = f"{WARM}::test_kills_the_warm_process: its child, forked from the warm process, died"
    run.expect(again in run.out, "the killer's crash was not named, or not run again")
    return _cell(name, run, f"{len(outcomes)} passed, the killer run again fresh; exit {run.rc}")
