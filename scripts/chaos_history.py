"""Chaos cells for the history database: the ways a team's CI breaks it.

- a fault run imported by ``--history``: the trigger's failure is the test's, every failed
  attempt of its victims the device's, whatever the retry made of them;
- a run pointed at a history file that is not a database: one line, exit 3, no test run;
- an import killed with SIGKILL in the middle of a backfill: every run it stored is whole,
  the file passes SQLite's integrity check, and importing again completes it to exactly
  what one clean import gives;
- two imports of overlapping files at once: every run once, nothing lost;
- the same on a PostgreSQL server, which can also die, restart or drop the connection in the
  middle of an import (``chaos_history_server.py``; skipped, said why, without a server).

``scripts/chaos.py`` runs :func:`history_cells` after its scenarios and prints each cell.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import psutil
from chaos_cells import Cell
from chaos_history_server import server_cells

ROOT = Path(__file__).resolve().parents[1]
SUITE = "scripts/chaos_suite"
TRIGGER = f"{SUITE}/test_chaos_l2.py::TestTrigger::test_launch"
_MARK = "CHAOS_HISTORY_IMPORT"
COPIES = 300  # runs in the killed backfill: enough that the kill lands mid-way

__all__ = ["history_cells"]


def history_cells(workdir: Path, platform: str = "a5sim") -> list[Cell]:
    folder = workdir / "history"
    folder.mkdir(parents=True, exist_ok=True)
    report, cell = _fault_run(folder, platform)
    cells = [cell, _not_a_database(folder, platform)]
    copies = _copies(report, folder / "copies")
    cells.append(_killed_backfill(folder, copies))
    cells.append(_two_imports_at_once(folder, copies[:12]))
    cells.append(_no_reader_left(folder))
    cells += server_cells(folder, report)  # the fault run's report, in two shards
    return cells


def _simpler(*args: str, **options: Any) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SIMPLER_OP_TIMEOUT_MS": "150"}
    env.pop("SIMPLER_HISTORY", None)
    return subprocess.run(
        [sys.executable, "-m", "simpler", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, **options,
    )  # fmt: skip


def _fault_run(folder: Path, platform: str) -> tuple[Path, Cell]:
    db, report = folder / "fault.db", folder / "fault.jsonl"
    run = _simpler(
        "run", "--platform", platform, "--device", "0-1", "-j", "1", "--report", str(report),
        "--history", str(db), "--", SUITE,
        "--simpler-sim-fault", "hang@TestTrigger#1", "--simpler-sim-fault", "force_reset_fail",
    )  # fmt: skip
    with closing(sqlite3.connect(db)) as conn:
        causes = conn.execute(
            "SELECT nodeid, cause FROM attempts WHERE cause IS NOT NULL"
        ).fetchall()
    own = {nodeid for nodeid, cause in causes if cause == "test"}
    devices = {nodeid for nodeid, cause in causes if cause == "device"}
    ok = run.returncode == 0 and own == {TRIGGER} and bool(devices) and TRIGGER not in devices
    seen = f"exit {run.returncode}; test-caused: {sorted(own)}; device-caused: {len(devices)}"
    return report, ("history: fault run attributed", ok, seen)


def _not_a_database(folder: Path, platform: str) -> Cell:
    notes = folder / "notes.db"
    notes.write_text("not a database\n" * 50)
    report = folder / "refused.jsonl"
    run = _simpler(
        "run", "--platform", platform, "--device", "0-1", "--report", str(report),
        "--history", str(notes), "--", SUITE,
    )  # fmt: skip
    lines = run.stderr.strip().splitlines()
    tests = report.exists() and '"type":"test"' in report.read_text().replace(" ", "")
    ok = run.returncode == 3 and len(lines) == 1 and not tests and "Traceback" not in run.stderr
    return ("history: not a database", ok, f"exit {run.returncode}; {lines[-1:]}")


def _copies(report: Path, folder: Path) -> list[Path]:
    """The fault run's report as COPIES runs of their own (a run id each)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.loads(line) for line in report.read_text().splitlines() if line.strip()]
    paths = []
    for index in range(COPIES):
        path = folder / f"run-{index:02d}.jsonl"
        copy = [{**record, "run": f"{record.get('run')}-{index:02d}"} for record in lines]
        path.write_text("".join(json.dumps(record) + "\n" for record in copy))
        paths.append(path)
    return paths


def _killed_backfill(folder: Path, copies: list[Path]) -> Cell:
    clean, killed = folder / "clean.db", folder / "killed.db"
    done = _simpler("history", "import", "--db", str(clean), *map(str, copies))
    if done.returncode != 0:
        return ("history: import killed", False, f"clean import exit {done.returncode}")
    argv = [sys.executable, "-m", "simpler", "history", "import", "--db", str(killed)]
    importer = subprocess.Popen(
        [*argv, *map(str, copies)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        env={**os.environ, _MARK: str(folder)},  # inherited by its readers: found after
    )
    stored = _wait_for_runs(killed, importer, at_least=COPIES // 4)
    importer.send_signal(signal.SIGKILL)
    importer.wait()
    with closing(sqlite3.connect(killed)) as conn:
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
        per_run = dict(conn.execute("SELECT run_id, count(*) FROM attempts GROUP BY run_id"))
    whole = len(set(per_run.values())) <= 1  # every stored run has all its attempts
    again = _simpler("history", "import", "--db", str(killed), *map(str, copies))
    same = _tables(killed) == _tables(clean)
    ok = integrity == "ok" and whole and again.returncode == 0 and same and stored < COPIES
    seen = (
        f"killed after {stored} of {COPIES} runs; integrity {integrity}; "
        f"runs whole: {whole}; re-import equals a clean one: {same}"
    )
    return ("history: import killed", ok, seen)


def _no_reader_left(folder: Path) -> Cell:
    """The killed import's reading processes died with it (they would hold a core each)."""
    deadline = time.monotonic() + 10  # SIGKILL of a parent reaches its children at once
    while True:
        left = [p.pid for p in psutil.process_iter() if _environ(p).get(_MARK) == str(folder)]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    return ("history: no reader left", not left, f"{len(left)} process(es) left: {left}")


def _environ(process: psutil.Process) -> dict[str, str]:
    try:
        return dict(process.environ())
    except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
        return {}


def _wait_for_runs(db: Path, importer: subprocess.Popen[bytes], *, at_least: int) -> int:
    """Poll the database until the importer has stored ``at_least`` runs (or ended)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and importer.poll() is None:
        try:
            with closing(sqlite3.connect(db, timeout=1)) as conn:
                count = conn.execute("SELECT count(*) FROM runs").fetchone()[0]
        except sqlite3.Error:
            count = 0  # not created yet
        if count >= at_least:
            return int(count)
        time.sleep(0.05)
    return COPIES  # it finished first: the cell says it never saw a kill mid-way


def _two_imports_at_once(folder: Path, copies: list[Path]) -> Cell:
    both = folder / "both.db"
    first, second = copies[:8], copies[4:]  # four runs in both
    argv = [sys.executable, "-m", "simpler", "history", "import", "--db", str(both)]
    imports = [
        subprocess.Popen([*argv, *map(str, paths)], cwd=ROOT, stdout=subprocess.DEVNULL)
        for paths in (first, second)
    ]
    codes = [process.wait(timeout=600) for process in imports]
    alone = folder / "alone.db"
    _simpler("history", "import", "--db", str(alone), *map(str, copies))
    same = _tables(both) == _tables(alone)
    ok = codes == [0, 0] and same
    return ("history: two imports at once", ok, f"exits {codes}; equal to one import: {same}")


def _tables(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """What the history holds, less when each row was written."""
    with closing(sqlite3.connect(db)) as conn:
        return {
            "runs": conn.execute(
                'SELECT run_id, "commit", branch, runner, platform, started, ended, complete, '
                "exit_code, suite FROM runs ORDER BY run_id"
            ).fetchall(),
            "attempts": conn.execute("SELECT * FROM attempts ORDER BY 1, 2, 3, 4").fetchall(),
            "verdicts": conn.execute("SELECT * FROM verdicts ORDER BY 1, 2").fetchall(),
        }
