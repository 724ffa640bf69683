"""simpler's benchmarks: every figure is a ratio against a baseline measured in the same run.

Run with ``nox -s bench``. Figures are printed and written to .simpler/bench.json;
the exit code is 1 when a figure misses its goal.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

BARE_CPPYY = "import cppyy"
RUNNER_NOOP = (
    "from simpler.runner import open_runner\nr = open_runner('a5sim', 0)\nr.init()\nr.run('noop')\n"
)


@dataclass
class Figure:
    name: str
    measured_s: float
    baseline_name: str
    baseline_s: float
    goal_ratio: float | None

    @property
    def ratio(self) -> float:
        return self.measured_s / self.baseline_s

    @property
    def met(self) -> bool:
        return self.goal_ratio is None or self.ratio <= self.goal_ratio


def _process_seconds(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - started


def _median_of_interleaved(a: str, b: str, repeats: int) -> tuple[float, float]:
    # Interleaving the two keeps a busy neighbour from favouring one side.
    a_times, b_times = [], []
    for _ in range(repeats):
        a_times.append(_process_seconds(a))
        b_times.append(_process_seconds(b))
    return statistics.median(a_times), statistics.median(b_times)


def runner_load(repeats: int) -> Figure:
    _process_seconds(RUNNER_NOOP)  # warm the compiled-library cache, as any second run finds it
    runner_s, bare_s = _median_of_interleaved(RUNNER_NOOP, BARE_CPPYY, repeats)
    return Figure(
        "runner load: import, open, init, noop", runner_s, "bare `import cppyy`", bare_s, 2.0
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--output", type=Path, default=Path(".simpler/bench.json"))
    args = parser.parse_args()

    figures = [runner_load(args.repeats)]
    print(f"{'figure':45} {'measured':>9} {'baseline':>9} {'ratio':>6} {'goal':>6}")
    for f in figures:
        goal = f"<={f.goal_ratio:g}x" if f.goal_ratio else "-"
        verdict = "" if f.met else "  MISSED"
        times = f"{f.measured_s:8.3f}s {f.baseline_s:8.3f}s"
        print(f"{f.name:45} {times} {f.ratio:5.2f}x {goal:>6}{verdict}")
        print(f"{'':45} (baseline: {f.baseline_name})")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        json.dumps([{**asdict(f), "ratio": f.ratio, "met": f.met} for f in figures], indent=2)
        + "\n"
    )
    return 0 if all(f.met for f in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
