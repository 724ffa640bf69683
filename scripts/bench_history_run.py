"""What ``simpler run --history F`` costs the run: the import's share of the run's wall time.

A full run (every phase) of a small device suite with one broken test, into a history that
grows by one run each time. The run prints how long its import took (on stderr, after the
summary); the figure is the run's wall time over the same wall time without the import,
each the median of the repeats. Measured inside each run rather than against separate runs
without ``--history``: two runs of a device suite differ by more than the import costs.

``python scripts/bench_history_run.py [REPEATS]`` prints the figure.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import ROOT, Figure, outside_actions

__all__ = ["run_overhead_figures"]

GOAL = 1.05  # issue 24: the import adds at most 5% to the run's wall time
SUITE = "tests/it/scenarios/scenario_history_suite.py"
_IMPORTED = re.compile(
    r"simpler: run imported into the history .*: (\d+) attempt\(s\) in ([\d.]+)s"
)


def run_overhead_figures(repeats: int) -> list[Figure]:
    walls, imports = [], []
    attempts = 0
    with tempfile.TemporaryDirectory(prefix="simpler-bench-history-run-") as folder:
        db = Path(folder) / "history.db"
        for index in range(repeats + 1):  # the first warms the page cache and .pyc files
            argv = [
                sys.executable, "-m", "simpler", "run", "--platform", "a5sim",
                "--device", "0-1", "--history", str(db),
                "--report", str(Path(folder) / f"report-{index}.jsonl"), "--", SUITE,
            ]  # fmt: skip
            started = time.perf_counter()
            done = subprocess.run(
                argv, cwd=ROOT, env=outside_actions(os.environ), capture_output=True, text=True
            )
            wall = time.perf_counter() - started
            found = _IMPORTED.search(done.stderr)
            if done.returncode != 1 or found is None:  # 1: the suite's broken test
                raise RuntimeError(f"simpler run exited {done.returncode}: {done.stderr[-500:]}")
            if index:
                walls.append(wall)
                imports.append(float(found.group(2)))
                attempts = int(found.group(1))
    wall_s, import_s = statistics.median(walls), statistics.median(imports)
    return [
        Figure(
            f"run --history: import of the run's {attempts} attempts",
            wall_s / (wall_s - import_s),
            "the same run's wall time without its import",
            f"import {import_s * 1000:.0f} ms of a {wall_s:.2f}s run (medians of {repeats})",
            GOAL,
        )
    ]


if __name__ == "__main__":
    for figure in run_overhead_figures(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        print(f"{figure.name}: {figure.ratio:.3f}x (goal {figure.goal}x) {figure.detail}")
