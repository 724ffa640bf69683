"""simpler's benchmarks: every figure is a ratio against a baseline measured in the same run.

Run with ``nox -s bench`` (``-- --only NAME`` for one figure). Figures are printed
and written to .simpler/bench.json; the exit code is 1 when a figure misses its goal.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BARE_CPPYY = "import cppyy"
RUNNER_NOOP = (
    "from simpler.runner import open_runner\nr = open_runner('a5sim', 0)\nr.init()\nr.run('noop')\n"
)
NOOP_CHILDREN = "scripts/bench_suite/test_noop_children.py"


@dataclass
class Figure:
    name: str
    ratio: float
    baseline: str  # what the ratio is measured against
    detail: str
    goal: float | None  # the ratio must be at most this

    @property
    def met(self) -> bool:
        return self.goal is None or self.ratio <= self.goal


def _process_seconds(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - started


def runner_load(repeats: int) -> list[Figure]:
    _process_seconds(RUNNER_NOOP)  # warm the compiled-library cache, as any second run finds it
    runner_times, bare_times = [], []
    for _ in range(repeats):  # interleaved, so a busy neighbour favours neither side
        runner_times.append(_process_seconds(RUNNER_NOOP))
        bare_times.append(_process_seconds(BARE_CPPYY))
    runner_s, bare_s = statistics.median(runner_times), statistics.median(bare_times)
    return [
        Figure(
            "runner load: import, open, init, noop",
            runner_s / bare_s,
            "a bare `import cppyy`",
            f"{runner_s:.3f}s vs {bare_s:.3f}s (medians of {repeats})",
            2.0,
        )
    ]


def scheduler_makespan(_repeats: int) -> list[Figure]:
    from simpler.scheduler.workloads import makespan_figures

    figures = makespan_figures()
    pools = ", ".join(
        f"pool {p}: {v['backfill_over_lower_bound']:.3f}/{v['backfill_over_fifo']:.3f}"
        for p, v in figures["per_pool"].items()
    )
    detail = f"mean over pools 4, 8, 16 x 20 mixed workloads of {figures['n_jobs']} jobs; {pools}"
    return [
        Figure(
            "scheduler: backfill makespan",
            figures["backfill_over_lower_bound"],
            "the lower bound",
            detail,
            1.05,
        ),
        Figure(
            "scheduler: backfill makespan",
            figures["backfill_over_fifo"],
            "strict FIFO",
            detail,
            0.85,
        ),
    ]


def resource_phase_wall(_repeats: int) -> list[Figure]:
    with tempfile.TemporaryDirectory(prefix="simpler-bench-") as folder:
        report = Path(folder) / "report.jsonl"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "simpler",
                "run",
                "--platform",
                "a5sim",
                "--device",
                "0-3",
                "--phases",
                "resource",
                "--report",
                str(report),
                "--",
                NOOP_CHILDREN,
            ],
            cwd=ROOT,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        records = [json.loads(line) for line in report.read_text().splitlines()]
    children = [r for r in records if r["type"] == "child"]
    phase_end = next(r for r in records if r["type"] == "phase" and r["event"] == "end")
    ideal = sum(c["duration_s"] for c in children) / 4
    wall = phase_end["duration_s"]
    return [
        Figure(
            f"resource phase: {len(children)} no-op children on 4 devices",
            wall / ideal,
            "ideal (sum of child run times / 4)",
            f"wall {wall:.2f}s, ideal {ideal:.2f}s, mean child {4 * ideal / len(children):.2f}s",
            1.5,
        )
    ]


BENCHMARKS: dict[str, Callable[[int], list[Figure]]] = {
    "runner_load": runner_load,
    "scheduler": scheduler_makespan,
    "resource_phase": resource_phase_wall,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--only", choices=sorted(BENCHMARKS), action="append")
    parser.add_argument("--output", type=Path, default=Path(".simpler/bench.json"))
    args = parser.parse_args()

    figures: list[Figure] = []
    for name in args.only or BENCHMARKS:
        figures += BENCHMARKS[name](args.repeats)
    print(f"{'figure':48} {'ratio':>7} {'goal':>7}  against")
    for f in figures:
        goal = f"<={f.goal:g}x" if f.goal is not None else "-"
        verdict = "" if f.met else "  MISSED"
        print(f"{f.name:48} {f.ratio:6.3f}x {goal:>7}  {f.baseline}{verdict}")
        print(f"{'':48} {f.detail}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        json.dumps([{**asdict(f), "met": f.met} for f in figures], indent=2) + "\n"
    )
    missed = [f.name for f in figures if not f.met]
    if missed:
        print(f"missed goal(s): {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
