"""Chaos cells for ``simpler run --cov``: the ways a run loses a process's coverage.

- an xdist worker SIGKILLed in L2: named ``coverage partial``/``lost`` ("xdist worker
  crashed"), the lines of the tests it finished before the crash still in the combined data,
  and its replacement's data too;
- Resource children SIGKILLed or killed at their timeout: each named with its why, what the
  timed-out one saved at SIGTERM in, the other processes combined;
- a hang that poisons an L2 worker: the victims re-run in fresh retry processes, whose lines
  (a function only the victims run) are in, none of them lost;
- two CI jobs (``--shard 1/2`` and ``2/2`` in two checkouts) merged by ``simpler report``:
  the same covered lines as one unsplit run, and its exit code.

Every run is a real ``simpler run --cov=measured`` in a copy of ``chaos_suite/cov_suite``
(its own root, its own ``.coverage``); each must end with its verdict line, the exit code
the line says, and one ``Coverage:`` line just above the failure index.
``scripts/chaos.py`` runs :func:`coverage_cells` after its scenarios and prints each cell.
"""

from __future__ import annotations

import ast
import os
import re
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chaos_cells import Cell, guarded
from chaos_processes import no_leftovers

from simpler.reporting.report_file import read_contents

__all__ = ["coverage_cells"]

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "scripts" / "chaos_suite" / "cov_suite"
PATHS = "measured/paths.py"  # the one measured file with lines, relative to a copy's root
CRASH, OTHER, HANG = "test_cov_crash.py", "test_cov_other.py", "test_cov_hang.py"
CHILDREN = "test_cov_children.py"
TRIGGER = f"{HANG}::TestTrigger::test_launch"
VICTIMS = (f"{HANG}::TestVictimA::test_a", f"{HANG}::TestVictimB::test_b")
_NAMED = re.compile(r"^coverage (lost|partial): (.+) \((.*)\)$")
_TOTAL = re.compile(r"^Coverage: (\S+) .*, (\d+) processes combined")

_INHERITED = ("SIMPLER_COV", "COVERAGE_", "SIMPLER_SIM_FAULTS", "SIMPLER_REPORT",
              "SIMPLER_HISTORY", "SIMPLER_PLAN", "SIMPLER_JOB", "SIMPLER_RUN_ID")  # fmt: skip

Record = dict[str, Any]
Lines = dict[str, set[int]]  # measured file (relative to its copy's root) -> covered lines


@dataclass
class Run:
    """One ``simpler`` command in a copy of the suite, and what it left."""

    copy: Path
    rc: int
    out: str
    report: Path | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def lines(self) -> list[str]:
        return self.out.rstrip("\n").splitlines()

    def named(self) -> dict[str, tuple[str, str]]:
        """The summary's ``coverage lost|partial`` lines: label -> (lost|partial, why)."""
        found = (_NAMED.match(line) for line in self.lines)
        return {m[2]: (m[1], m[3]) for m in found if m}

    def records(self) -> list[Record]:
        return read_contents(self.report).records if self.report else []

    def covered(self) -> Lines:
        return covered_lines(self.copy / ".coverage", self.copy)

    def data_dir(self) -> Path:
        """Where the run's data files lie, as its ``run`` record says."""
        run = next(r for r in self.records() if r.get("event") == "run")
        assert self.report is not None
        return self.report.parent / str(run["data_dir"])

    def data_files(self) -> int:
        """The run's data files on disk, every one of which the combine must have read."""
        return sum(1 for p in self.data_dir().iterdir() if ".pid" in p.name)

    def process_file(self, label: str) -> Lines:
        """What the process ``label`` saved, read from its own data file (none: empty)."""
        records = [r for r in self.records() if r.get("type") == "coverage"]
        pids = {r["pid"] for r in records if r.get("label") == label and "pid" in r}
        files = [p for pid in pids for p in self.data_dir().glob(f"*.pid{pid}.X*")]
        merged: Lines = {}
        for path in files:
            for name, lines in covered_lines(path, self.copy).items():
                merged.setdefault(name, set()).update(lines)
        return merged

    def expect(self, ok: bool, problem: str) -> None:
        if not ok:
            self.problems.append(problem)


def coverage_cells(workdir: Path) -> list[Cell]:
    folder = workdir / "coverage"
    folder.mkdir(parents=True, exist_ok=True)
    cells = (_crashed_worker, _killed_children, _retry_after_hang, _two_jobs_merged)
    return [guarded("coverage", cell, folder) for cell in cells]


def covered_lines(data_file: Path, root: Path) -> Lines:
    """coverage.py's own reading of a data file: covered lines per file, under ``root``."""
    from coverage import CoverageData

    data = CoverageData(basename=str(data_file))
    data.read()
    found: Lines = {}
    for name in data.measured_files():
        path = Path(name)
        key = str(path.relative_to(root)) if path.is_relative_to(root) else name
        found[key] = set(data.lines(name) or ())
    return found


def body_lines(function: str) -> set[int]:
    """The lines of ``measured.paths.function``'s body: run only when the function is."""
    tree = ast.parse((SUITE / PATHS).read_text())
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function)
    return {stmt.lineno for stmt in node.body}


def ran(lines: Lines, function: str) -> bool:
    return body_lines(function) <= lines.get(PATHS, set())


def _copy(folder: Path, name: str) -> Path:
    """A checkout of the suite of its own: its root is the run's root."""
    copy = folder / name
    shutil.copytree(SUITE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    return copy


def _simpler(copy: Path, *args: str, run_id: str = "") -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "CHAOS_COVERAGE": "1",
        "SIMPLER_OP_TIMEOUT_MS": "150",
        "SIMPLER_LOCK_DIR": str(copy.parent / "locks"),
    }
    for name in [n for n in env if n.startswith(_INHERITED)]:
        env.pop(name)  # a fault, report, plan, history or coverage of the caller's own
    if run_id:
        env["SIMPLER_RUN_ID"] = run_id
    return subprocess.run(
        [sys.executable, "-m", "simpler", *args],
        cwd=copy,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )


def _run(copy: Path, tag: str, expected_rc: int, *args: str, jobs: int = 1) -> Run:
    """``simpler run --cov=measured`` on two devices; ``args`` after its own, ``--`` among them."""
    report = copy / tag / "report.jsonl"
    run_id = f"chaos-cov-{tag}-{secrets.token_hex(4)}"
    argv = ["run", "--platform", "a5sim", "--device", "0-1", "-j", str(jobs),
            "--report", str(report), "--cov=measured", *args]  # fmt: skip
    done = _simpler(copy, *argv, run_id=run_id)
    run = Run(copy, done.returncode, done.stdout, report)
    _check_last_lines(run, expected_rc)
    notes: list[str] = []
    run.expect(no_leftovers(run_id, notes), "; ".join(notes))
    return run


def _check_last_lines(run: Run, expected_rc: int) -> None:
    """The verdict line last, with the exit code; one ``Coverage:`` line, just above the index."""
    lines = run.lines
    last = lines[-1] if lines else ""
    said = re.search(r" -> exit (\d+)$", last)
    run.expect(said is not None and int(said[1]) == run.rc, f"last line {last[-80:]!r}")
    run.expect(run.rc == expected_rc, f"exit {run.rc}, expected {expected_rc}")
    totals = [i for i, line in enumerate(lines) if line.startswith("Coverage: ")]
    if len(totals) != 1:
        run.expect(False, f"{len(totals)} 'Coverage:' lines")
        return
    after = lines[totals[0] + 1 : -1]
    run.expect(
        not after or after[0].startswith("Unrecovered failures"),
        f"after the Coverage line: {after[:1]}",
    )


def _total(run: Run) -> tuple[str, int]:
    """The Coverage line's percent and its count of processes combined."""
    found = [m for m in map(_TOTAL.match, run.lines) if m]
    return (found[0][1], int(found[0][2])) if found else ("", -1)


def _every_file_combined(run: Run) -> tuple[str, int]:
    """``_total``, whose count of processes combined must be every data file of the run."""
    percent, processes = _total(run)
    run.expect(processes == run.data_files(), f"{processes} combined of {run.data_files()}")
    return percent, processes


def _short(lines: Lines) -> str:
    return ", ".join(f"{name[-40:]}: {len(covered)}" for name, covered in sorted(lines.items()))


def _cell(name: str, run: Run, seen: str) -> Cell:
    ok = not run.problems
    return name, ok, seen if ok else "; ".join(run.problems)[:300]


def _crashed_worker(folder: Path) -> Cell:
    """L2 on two xdist workers; one SIGKILLs itself on its second test (its retry passes)."""
    run = _run(_copy(folder, "crash"), "run", 0, "--", CRASH, OTHER, jobs=2)
    records = run.records()
    crashed = [
        r
        for r in records
        if r.get("event") == "ended" and str(r.get("why") or "").startswith("xdist worker crashed")
    ]
    if len(crashed) != 1:
        run.expect(False, f"{len(crashed)} crashed-worker records")
        return _cell("coverage: xdist worker SIGKILLed", run, "")
    label = str(crashed[0]["label"])
    kind, why = run.named().get(label, ("", ""))
    run.expect(
        kind in ("lost", "partial") and why.startswith("xdist worker crashed"),
        f"{label!r} not named lost/partial: {kind} {why}",
    )
    run.expect(kind == "partial", f"{label!r} {kind}: its finished test's save is missing")
    gw = label.rsplit(" ", 1)[-1]
    before = [r for r in records if r.get("nodeid") == f"{CRASH}::TestCrash::test_before"]
    run.expect(
        any(str(r.get("worker", "")).endswith("/" + gw) for r in before),
        f"test_before did not run in {gw} before its crash",
    )
    combined = run.covered()
    run.expect(
        ran(run.process_file(label), "before_crash"), f"{label}'s own file lacks test_before"
    )
    for function in ("before_crash", "after_crash", "in_other_file"):
        run.expect(ran(combined, function), f"{function} not in the combined data")
    crash_at = records.index(crashed[0])
    replacements = [  # the xdist workers started after the crash: in the crashed one's place
        str(r["label"])
        for r in records[crash_at:]
        if r.get("event") == "process" and "xdist worker" in str(r.get("label"))
    ]
    run.expect(bool(replacements), "no xdist worker started after the crash")
    for other in replacements:
        own = run.process_file(other)
        run.expect(bool(own) and other not in run.named(), f"{other}: no data of its own")
        inside = all(lines <= combined.get(name, set()) for name, lines in own.items())
        run.expect(inside, f"{other}'s lines are not all in the combined data")
    percent, _ = _every_file_combined(run)
    return _cell(
        "coverage: xdist worker SIGKILLed",
        run,
        f"{label} {kind}; {len(replacements)} replacement(s); {percent}",
    )


def _killed_children(folder: Path) -> Cell:
    """Resource children: one SIGKILLs itself, one hangs past its timeout, one passes."""
    run = _run(_copy(folder, "children"), "run", 1, "--", CHILDREN, OTHER, jobs=2)
    named = run.named()
    killed = named.get(f"Resource child {CHILDREN}::test_child_killed", ("", ""))
    hung = named.get(f"Resource child {CHILDREN}::test_child_hangs", ("", ""))
    run.expect(
        killed[0] in ("lost", "partial") and killed[1].startswith("killed by SIGKILL"),
        f"SIGKILLed child named {killed}",
    )
    run.expect(
        hung == ("partial", "killed at the job timeout; what it saved is in"),
        f"timed-out child named {hung}",
    )
    run.expect(len(named) == 2, f"named: {sorted(named)}")
    combined = run.covered()
    for function in ("in_child", "in_other_file", "before_hang"):  # before_hang: its SIGTERM
        run.expect(ran(combined, function), f"{function} not in the combined data")
    percent, processes = _every_file_combined(run)
    return _cell(
        "coverage: Resource children killed",
        run,
        f"SIGKILL {killed[0]}, timeout {hung[0]}; {processes} combined; {percent}",
    )


def _retry_after_hang(folder: Path) -> Cell:
    """The trigger hangs once, the reset fails: its victims are re-run in fresh processes."""
    faults = ("--simpler-sim-fault", f"hang@{TRIGGER}#1", "--simpler-sim-fault", "force_reset_fail")
    run = _run(_copy(folder, "hang"), "run", 0, "--", HANG, *faults)
    records = run.records()
    verdicts = {
        r.get("nodeid"): r.get("outcome")
        for r in records
        if r.get("type") == "test" and r.get("phase") == "retry"
    }
    run.expect(all(verdicts.get(v) == "recovered" for v in VICTIMS), f"retry: {verdicts}")
    run.expect(not run.named(), f"named: {run.named()}")
    retries = {
        str(r["label"])
        for r in records
        if r.get("event") == "process" and r.get("phase") == "retry"
    }
    victims_own = [label for label in retries if ran(run.process_file(label), "only_victims")]
    run.expect(bool(victims_own), f"no retry process saved only_victims: {sorted(retries)}")
    run.expect(not ran(run.process_file("L2 pass"), "only_victims"), "victims ran in L2")
    run.expect(ran(run.covered(), "only_victims"), "only_victims not in the combined data")
    percent, _ = _every_file_combined(run)
    return _cell(
        "coverage: retry after a hang",
        run,
        f"{len(retries)} retry process(es), none lost; {percent}",
    )


def _two_jobs_merged(folder: Path) -> Cell:
    """Two shards in two checkouts, merged in a third: the covered lines of one unsplit run."""
    tests = ("--", HANG, OTHER, f"{CHILDREN}::test_child_ok")
    one = _run(_copy(folder, "unsplit"), "run", 0, *tests)
    unsplit = one.covered()  # read now: the merge below writes this checkout's .coverage
    jobs = [_run(_copy(folder, f"job{i}"), "run", 0, "--shard", f"{i}/2", *tests) for i in (1, 2)]
    files = [arg for job in jobs for arg in ("--file", str(job.report))]
    done = _simpler(one.copy, "report", *files)
    merged = Run(one.copy, done.returncode, done.stdout)
    _check_last_lines(merged, one.rc)
    for run in (one, *jobs):
        merged.problems += run.problems
    shares = [job.covered().get(PATHS, set()) for job in jobs]
    whole = unsplit.get(PATHS, set())
    merged.expect(all(s and s < whole for s in shares), "a shard ran every measured line")
    lines = merged.covered()
    merged.expect(lines == unsplit, f"merged {_short(lines)} != unsplit {_short(unsplit)}")
    merged.expect(_total(merged)[0] == _total(one)[0], f"{_total(merged)} vs {_total(one)}")
    return _cell(
        "coverage: two CI jobs merged",
        merged,
        f"{len(whole)} covered lines alike; {_total(merged)[0]}; exit {merged.rc}",
    )
