"""What ``simpler run --cov`` costs: the scene suite measured, the saves after every test, and
the report's combine of many processes' data files.

``python scripts/bench_coverage.py [REPEATS]`` prints the figures ``coverage_figures`` hands
to ``nox -s bench``:

- the scene suite under ``--cov=simpler`` (no report: the combine is still done, and timed)
  against the same run without coverage;
- the same measured run saving after each test (the default), or when the next test is in
  another file, against saving only at exit (``SIMPLER_COV_SAVE``): informational;
- simpler's combine of the 200 data files a 5,000-test suite's processes would leave, against
  coverage.py's own ``coverage combine`` of the same files, each in a process of its own so
  that interpreter start-up is on both sides; both must measure the same lines.
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from bench import Figure, _command_seconds, _interleaved_medians, outside_actions

__all__ = [
    "combine_figures",
    "coverage_figures",
    "measured_lines",
    "module_lines",
    "run_figures",
    "write_process_data",
]

SUITE, DEVICES = "tests/st", "0-1"
RUN_GOAL = 1.3
COMBINE_GOAL = 1.5
# The workload of the combine: 200 processes of 25 tests each over a package of 150 modules.
PROCESSES, TESTS_PER_PROCESS, MODULES = 200, 25, 150
FUNCTIONS, BODY = 20, 6  # functions per module, lines per function body
DEAD = 2  # functions per module no test runs: the union is not every line
MODULES_PER_TEST, FUNCTIONS_PER_MODULE = 12, 3
COMBINE_SIMPLER = """\
import sys
from pathlib import Path
from simpler.coverage.accounts import RunData
from simpler.coverage.combine import combine_runs
from simpler.reporting.records import CoverageRecord
data_dir, out, root, expected = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
done = combine_runs([RunData("bench", data_dir, root, CoverageRecord({}), [])], out, root=root)
assert done.files_combined == int(expected) and not done.unreadable, done
"""
SAVES = ("test", "file", "exit")


def _env(**extra: str) -> dict[str, str]:
    """The bench's own environment without what would steer the measured runs: a run's own
    variables, any coverage that measures the bench, and PYTHONDONTWRITEBYTECODE (where it is
    set, every pytest process would compile simpler again, a start-up no user pays)."""
    env = outside_actions(os.environ)
    steering = [k for k in env if k.startswith(("SIMPLER_", "COVERAGE_"))]
    for key in (*steering, "PYTHONDONTWRITEBYTECODE"):
        env.pop(key, None)
    return {**env, **extra}


def _scene_run(report: Path, *cov: str) -> list[str]:
    return [sys.executable, "-m", "simpler", "run", "--platform", "a5sim", "--device", DEVICES,
            "--report", str(report), *cov, "--", SUITE]  # fmt: skip


def run_figures(repeats: int) -> list[Figure]:
    """The scene suite without coverage and under ``--cov=simpler`` with each save point, in
    rounds; each round starts at the next variant, so that none always follows another. The
    first round warms the page cache, .pyc files and the compiled-library cache, and is
    dropped."""
    variants = {"plain": ((), _env())} | {
        save: (("--cov=simpler", "--cov-report="), _env(SIMPLER_COV_SAVE=save)) for save in SAVES
    }
    names = list(variants)
    times: dict[str, list[float]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory(prefix="simpler-bench-cov-") as folder:
        for index in range(repeats + 1):
            for name in names[index % len(names) :] + names[: index % len(names)]:
                cov, env = variants[name]
                report = Path(folder) / f"{name}-{index}" / "report.jsonl"  # its own report dir
                seconds = _command_seconds(_scene_run(report, *cov), env=env)
                shutil.rmtree(report.parent)
                if index:
                    times[name].append(seconds)
    wall = {name: statistics.median(seconds) for name, seconds in times.items()}
    medians = f"medians of {repeats}; devices {DEVICES}"
    return [
        Figure(
            "scene suite under --cov=simpler",
            wall["test"] / wall["plain"],
            "the same run without coverage",
            f"{wall['test']:.2f}s vs {wall['plain']:.2f}s ({medians}; saved after each test)",
            RUN_GOAL,
        ),
        *(
            Figure(
                f"--cov, saves {'per test' if save == 'test' else 'per file'}",
                wall[save] / wall["exit"],
                "saving only at exit",
                f"{wall[save]:.2f}s vs {wall['exit']:.2f}s ({medians})",
                None,  # informational: what the saves cost, to weigh against what they keep
            )
            for save in ("test", "file")
        ),
    ]


def module_lines() -> tuple[list[int], list[list[int]]]:
    """The lines every import runs (docstring, each ``def``), and each function's body."""
    defs = [2 + f * (BODY + 1) for f in range(FUNCTIONS)]
    return [1, *defs], [list(range(d + 1, d + 1 + BODY)) for d in defs]


def write_package(root: Path) -> list[Path]:
    """A package of ``MODULES`` real modules (a report could read them), laid out as
    ``module_lines`` says."""
    package = root / "benchpkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""A generated package."""\n')
    body = "".join(f"    x = x * {n} + 1\n" for n in range(1, BODY))
    text = '"""A generated module."""\n' + "".join(
        f"def f{f}(x: int) -> int:\n{body}    return x\n" for f in range(FUNCTIONS)
    )
    paths = [package / f"mod_{m:03d}.py" for m in range(MODULES)]
    for path in paths:
        path.write_text(text)
    return paths


def write_process_data(
    root: Path, data_dir: Path, processes: int = PROCESSES
) -> dict[str, set[int]]:
    """``processes`` data files as pytest processes of 25 tests each would leave them: every
    module imported (its top-level lines), each test running a few functions of a dozen
    modules, the low-numbered ones more often (shared helpers), so that processes overlap.
    The last ``DEAD`` functions of each module never run. Named as a run's files are
    (``<label>.<host>.pid<N>.X<rand>x.H<hash>h``; one pid, this one's, for all). Returns the
    union of the lines, what any combine must measure."""
    paths = [str(p) for p in write_package(root)]
    top, bodies = module_lines()
    rng = random.Random(2024)
    data_dir.mkdir(parents=True, exist_ok=True)
    union: dict[str, set[int]] = {path: set() for path in paths}
    from coverage import CoverageData

    for _ in range(processes):
        lines = {path: set(top) for path in paths}
        for _ in range(TESTS_PER_PROCESS):
            modules = {min(int(rng.expovariate(3 / MODULES)), MODULES - 1)
                       for _ in range(MODULES_PER_TEST)}  # fmt: skip
            for module in modules:
                for function in rng.sample(range(FUNCTIONS - DEAD), FUNCTIONS_PER_MODULE):
                    lines[paths[module]].update(bodies[function])
        # suffix=True: named as coverage.py names each process's file, the hash of its data
        # included, which `coverage combine` reads instead of hashing the file's bytes.
        data = CoverageData(basename=str(data_dir / "L2_pass"), suffix=True)
        data.add_lines({path: sorted(measured) for path, measured in lines.items()})
        data.write()
        data.close()
        for path, measured in lines.items():
            union[path] |= measured
    return union


def measured_lines(data_file: Path) -> dict[str, set[int]]:
    from coverage import CoverageData

    data = CoverageData(basename=str(data_file))
    data.read()
    try:
        return {path: set(data.lines(path) or ()) for path in data.measured_files()}
    finally:
        data.close()


def combine_figures(repeats: int) -> list[Figure]:
    with tempfile.TemporaryDirectory(prefix="simpler-bench-combine-") as folder:
        root = Path(folder) / "checkout"
        data_dir = root / "coverage" / "bench"
        union = write_process_data(root, data_dir)
        files = sorted(str(p) for p in data_dir.iterdir())
        assert len(files) == PROCESSES, files
        ours, theirs = root / "combined-simpler", root / "combined-coverage"
        simpler_s, coverage_s = _interleaved_medians(
            [sys.executable, "-c", COMBINE_SIMPLER, str(data_dir), str(ours), str(root),
             str(PROCESSES)],
            [sys.executable, "-m", "coverage", "combine", "--keep", f"--data-file={theirs}",
             *files],
            repeats,
            cwd=root,  # no config file there: coverage.py's defaults on both sides
            command_env=_env(),  # simpler is installed (editable): no PYTHONPATH on either side
            baseline_env=_env(),
            accepted=(0,),
        )  # fmt: skip
        # A ratio of two combines that disagree would compare apples to oranges.
        if not measured_lines(ours) == measured_lines(theirs) == union:
            raise RuntimeError("simpler's and coverage.py's combines measure different lines")
        size_mib = sum(os.path.getsize(f) for f in files) / 2**20
    return [
        Figure(
            f"combine {PROCESSES} processes of a {PROCESSES * TESTS_PER_PROCESS:,}-test suite",
            simpler_s / coverage_s,
            "`coverage combine` of the same files",
            f"{simpler_s:.3f}s vs {coverage_s:.3f}s ({MODULES} files, {size_mib:.1f} MiB of "
            f"data; medians of {repeats})",
            COMBINE_GOAL,
        )
    ]


def coverage_figures(repeats: int) -> list[Figure]:
    return [*run_figures(repeats), *combine_figures(repeats)]


if __name__ == "__main__":
    for figure in coverage_figures(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        print(f"{figure.name}: {figure.ratio:.3f} (goal {figure.goal}) {figure.detail}")
