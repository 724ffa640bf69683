"""The chaos matrix's output beside its runs: the report file under many writers at once,
the table of checks, and one timeline drawn from the first run of every cell."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from simpler import report

__all__ = ["concurrent_appends", "print_table", "render_timeline"]

ROOT = Path(__file__).resolve().parents[1]


def _append_records(path: str, writer: int, count: int) -> None:
    for i in range(count):
        report.append(path, report.make_record("test", nodeid=f"w{writer}::t{i}", outcome="passed"))


def concurrent_appends(workdir: Path, writers: int = 16, each: int = 2000) -> tuple[bool, str]:
    path = str(workdir / "concurrency.jsonl")
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(target=_append_records, args=(path, w, each)) for w in range(writers)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join()
    contents = report.read_contents(path)
    distinct = len({r["nodeid"] for r in contents.records})
    ok = distinct == writers * each and contents.malformed == 0
    return ok, f"{distinct}/{writers * each} records, {contents.malformed} torn"


def render_timeline(reports: list[Path], out: Path) -> str:
    """One picture of the first run of every cell (each report file is a run of its own lanes)."""
    target = out / "timeline.html"
    argv = [sys.executable, "-m", "simpler", "report", "--timeline", str(target)]
    for path in reports:
        argv += ["--file", str(path)]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    return str(target) if target.exists() else f"not rendered ({done.stderr.strip()})"


def print_table(outcomes: Sequence[Any], checks: Sequence[str]) -> None:
    """The matrix: per fault and sim, how many runs passed each check, then the totals."""
    cells: dict[tuple[str, str], list[Any]] = {}
    for outcome in outcomes:
        cells.setdefault((outcome.scenario.name, outcome.platform), []).append(outcome)
    print(f"\n{'fault':26} {'sim':8} " + " ".join(f"{c:>15}" for c in checks) + "  notes")
    for (name, platform), runs in cells.items():
        row = " ".join(f"{sum(r.checks[c] for r in runs):>12}/{len(runs):<2}" for c in checks)
        notes = "; ".join(sorted({n for r in runs for n in r.notes}))
        print(f"{name:26} {platform:8} {row}  {notes}")
    totals = " ".join(
        f"{sum(o.checks[c] for o in outcomes):>12}/{len(outcomes):<2}" for c in checks
    )
    print(f"{'total':35} {totals}")
