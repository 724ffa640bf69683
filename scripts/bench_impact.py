"""What the impact map costs: a run that keeps it, and storing it.

``python scripts/bench_impact.py [REPEATS]`` prints the figures ``impact_figures`` hands to
``nox -s bench``:

- the scene suite with ``--impact-map`` against the same run with ``--cov`` (what the map adds
  to coverage: per-test contexts, the map built from them, the history's rows), and against
  the same run without coverage. Both measure ``simpler``; the runs are made in a clone of
  HEAD (``--impact-map`` keeps a map only of a committed tree), its own simpler imported;
- storing a map (``save_run_map``: the blocks of each measured file, each test's blocks from
  the per-test contexts, the file beside the report, the rows in a SQLite history) of the data
  200 processes of a 5,000-test suite leave, against ``coverage combine`` of the same
  processes' files, each in a process of its own.
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench import Figure, _command_seconds, _interleaved_medians
from bench_coverage import (
    FUNCTIONS_PER_MODULE,
    MODULES,
    MODULES_PER_TEST,
    PROCESSES,
    TESTS_PER_PROCESS,
    _env,
    module_lines,
    write_package,
)
from bench_isolation import _rounds

__all__ = ["impact_figures", "run_figures", "store_figures"]

SUITE, DEVICES = "tests/st", "0-1"
OVER_COV_GOAL, OVER_PLAIN_GOAL, STORE_GOAL = 1.1, 1.5, 2.0
ROOT = Path(__file__).resolve().parents[1]
STORE_MAP = """\
import sys
from pathlib import Path
from simpler.impact.run_map import MapTarget, save_run_map
combined, root, history = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
target = MapTarget(history, "0" * 40, root, root / "impact" / "bench.json")
line = save_run_map(combined, target, {})
assert f": {sys.argv[4]} tests," in line, line
"""


def _scene_run(report: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "simpler", "run", "--platform", "a5sim", "--device", DEVICES,
            "--report", str(report), *options, "--", SUITE]  # fmt: skip


def run_figures(repeats: int) -> list[Figure]:
    """The scene suite plain, with ``--cov=simpler`` and with ``--impact-map --cov=simpler``,
    in rounds (``bench_isolation._rounds``: each starts at the next variant, the first is
    dropped); every run reports into a fresh folder."""
    variants = {
        "plain": (),
        "cov": ("--cov=simpler", "--cov-report="),
        "impact": ("--impact-map", "--cov=simpler", "--cov-report="),
    }
    with tempfile.TemporaryDirectory(prefix="simpler-bench-impact-") as folder:
        checkout = Path(folder) / "checkout"
        subprocess.run(["git", "clone", "-q", "--local", str(ROOT), str(checkout)], check=True)

        def run(options: tuple[str, ...]) -> Callable[[Path], dict[str, float]]:
            def measure(scratch: Path) -> dict[str, float]:
                # The map goes to the checkout's own history (.simpler/history.db), as a
                # user's does: --history would also import the run, which is no map's cost.
                command = _scene_run(scratch / "report.jsonl", *options)
                seconds = _command_seconds(command, env=_env(), cwd=checkout)
                if "--impact-map" in options and not list((scratch / "impact").glob("*.json")):
                    raise RuntimeError("the --impact-map run kept no map: " + " ".join(command))
                return {"wall": seconds}

            return measure

        measured = _rounds({name: run(options) for name, options in variants.items()}, repeats)
    wall = {name: measures["wall"] for name, measures in measured.items()}
    medians = f"medians of {repeats}; devices {DEVICES}"
    return [
        Figure(
            "scene suite with --impact-map",
            wall["impact"] / wall["cov"],
            "the same run with --cov",
            f"{wall['impact']:.2f}s vs {wall['cov']:.2f}s ({medians})",
            OVER_COV_GOAL,
        ),
        Figure(
            "scene suite with --impact-map, over no coverage",
            wall["impact"] / wall["plain"],
            "the same run without coverage",
            f"{wall['impact']:.2f}s vs {wall['plain']:.2f}s ({medians})",
            OVER_PLAIN_GOAL,
        ),
    ]


def write_context_data(root: Path, data_dir: Path) -> int:
    """The data files of ``PROCESSES`` processes of ``TESTS_PER_PROCESS`` tests each, every
    test's lines under its own context (``nodeid|run``, as ``--cov-context test`` names them)
    over the package ``write_package`` lays out; the number of tests."""
    from coverage import CoverageData

    paths = [str(p) for p in write_package(root)]
    top, bodies = module_lines()
    rng = random.Random(2024)
    data_dir.mkdir(parents=True, exist_ok=True)
    for process in range(PROCESSES):
        data = CoverageData(basename=str(data_dir / "L2_pass"), suffix=True)
        data.set_context("")
        data.add_lines({path: top for path in paths})  # the imports, before any test
        for test in range(TESTS_PER_PROCESS):
            data.set_context(f"tests/test_{process:03d}.py::test_{test:02d}|run")
            lines: dict[str, set[int]] = {}
            modules = {min(int(rng.expovariate(3 / MODULES)), MODULES - 1)
                       for _ in range(MODULES_PER_TEST)}  # fmt: skip
            for module in modules:
                for function in rng.sample(range(len(bodies) - 2), FUNCTIONS_PER_MODULE):
                    lines.setdefault(paths[module], set()).update(bodies[function])
            data.add_lines({path: sorted(measured) for path, measured in lines.items()})
        data.write()
        data.close()
    return PROCESSES * TESTS_PER_PROCESS


def store_figures(repeats: int) -> list[Figure]:
    with tempfile.TemporaryDirectory(prefix="simpler-bench-impact-store-") as folder:
        root = Path(folder) / "checkout"
        data_dir = root / "coverage" / "bench"
        tests = write_context_data(root, data_dir)
        files = sorted(str(p) for p in data_dir.iterdir())
        combined = root / "combined"
        subprocess.run([sys.executable, "-m", "coverage", "combine", "--keep",
                        f"--data-file={combined}", *files],
                       cwd=root, env=_env(), check=True, capture_output=True)  # fmt: skip
        history = Path(folder) / "history.db"
        store_s, combine_s = _interleaved_medians(
            [sys.executable, "-c", STORE_MAP, str(combined), str(root), str(history), str(tests)],
            [sys.executable, "-m", "coverage", "combine", "--keep",
             f"--data-file={root / 'again'}", *files],
            repeats,
            cwd=root,
            command_env=_env(),
            baseline_env=_env(),
            accepted=(0,),
        )  # fmt: skip
    return [
        Figure(
            f"store the map of a {tests:,}-test suite",
            store_s / combine_s,
            "`coverage combine` of the same data",
            f"{store_s:.3f}s vs {combine_s:.3f}s ({PROCESSES} processes, {MODULES} files, "
            f"per-test contexts; medians of {repeats})",
            STORE_GOAL,
        )
    ]


def impact_figures(repeats: int) -> list[Figure]:
    return [*run_figures(repeats), *store_figures(repeats)]


if __name__ == "__main__":
    for figure in impact_figures(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        print(f"{figure.name}: {figure.ratio:.3f}x (goal {figure.goal}x) {figure.detail}")
