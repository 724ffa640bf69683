"""Every core busy on one card or many: ``simpler run``'s slots against plain pytest.

``python scripts/bench_slots.py [REPEATS]`` prints the figures ``slots_figures`` hands to
``nox -s bench`` (each a ratio of medians measured in the same rounds, interleaved):

- a device-free suite of 1,000 tests of ~30 ms of CPU in 100 files: ``simpler run`` with no
  ``-n`` and no ``-j`` against ``pytest -n 2``; with ``--cov`` against ``pytest -n 2 --cov``
  (pytest-cov); ``--isolate file`` against ``pytest -n 2``;
- the same suite with one test in ten on the pooled worker, ``--device 0``, against one plain
  pytest process of the same tests (``--simpler-platform a5sim --simpler-device 0``): the card's
  tests take it in turn while the rest fill the other slot;
- the one-card coverage job in miniature: 2,000 tests in 200 files and a planted cross-file
  contamination, ``--device 0 --isolate file --cov``, against one ``pytest --cov`` process:
  green, the contamination kept out, and the lines it measured those of a one-process
  ``coverage run``;
- what an isolated unit costs beyond its own tests, against what pytest's collection of its
  file alone costs in a process of its own, and a run's fixed cost before its first test and
  after its last, on the scene suite, against plain ``pytest -n 2``'s.

pytest-cov is not a dependency of simpler: the bench installs it once into a folder of its own
(``.simpler/bench-deps``) that only the baseline's processes see.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench import ROOT, Figure, _command_seconds
from bench_coverage import _env
from bench_isolation import _passed, _records, _rounds, calibrate, write_suite

__all__ = ["slots_figures"]

SIMPLER_RUN = (sys.executable, "-m", "simpler", "run", "--platform", "a5sim")
PYTEST = (sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q")
FREE_GOAL, FREE_COV_GOAL, FREE_ISOLATED_GOAL, ONE_CARD_GOAL, COV_JOB_GOAL = (
    1.05,
    1.05,
    1.15,
    0.65,
    0.6,
)
TEST_S, COV_JOB_TEST_S = 0.030, 0.005
COV_JOB_FILES = 200
BENCH_DEPS = ROOT / ".simpler" / "bench-deps"
PYTEST_COV = "pytest-cov==7.0.0"
FIRST_TEST = "\n\ndef test_0() -> None:\n    assert work(LOOPS) >= 0\n"
ON_THE_CARD = (
    "\n\ndef test_on_the_card(worker):\n"
    "    import numpy as np\n"
    "    assert work(LOOPS) >= 0\n"
    "    assert (worker.run('vector_add', np.ones(4, np.float32), np.ones(4, np.float32)) == 2)"
    ".all()\n"
)


def _with_pytest_cov() -> dict[str, str]:
    """The bench's environment with pytest-cov importable (installed once, on first use)."""
    marker = BENCH_DEPS / ".installed"
    if not marker.exists() or marker.read_text() != PYTEST_COV:
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--upgrade",
             "--target", str(BENCH_DEPS), PYTEST_COV],
            check=True,
        )  # fmt: skip
        marker.write_text(PYTEST_COV)
    path = os.pathsep.join(p for p in (str(BENCH_DEPS), os.environ.get("PYTHONPATH")) if p)
    return _env(PYTHONPATH=path)


def _simpler(project: Path, tests: int, *options: str, device: str = "0") -> Any:
    def run(scratch: Path) -> dict[str, float]:
        report = scratch / "r.jsonl"
        argv = [*SIMPLER_RUN, "--device", device, "--report", str(report), *options, "--", "tests"]
        seconds = _command_seconds(argv, cwd=project, env=_env(), accepted=(0,))
        if (passed := _passed(report)) != tests:
            raise RuntimeError(f"{' '.join(options)}: {passed} of {tests} tests passed")
        return {"wall": seconds}

    return run


def _plain(project: Path, *argv: str, env: dict[str, str] | None = None) -> Any:
    def run(scratch: Path) -> dict[str, float]:
        options = [arg.replace("{scratch}", str(scratch)) for arg in argv]
        seconds = _command_seconds([*PYTEST, *options], cwd=project, env=env or _env())
        return {"wall": seconds}

    return run


def _figure(
    name: str, ours: float, theirs: float, baseline: str, detail: str, goal: float
) -> Figure:
    return Figure(name, ours / theirs, baseline, f"{ours:.2f}s vs {theirs:.2f}s; {detail}", goal)


def device_free_suite(repeats: int) -> list[Figure]:
    import tempfile

    loops = calibrate(TEST_S)
    cov_env = _with_pytest_cov()
    with tempfile.TemporaryDirectory(prefix="simpler-bench-slots-") as folder:
        project = Path(folder) / "suite"
        tests = write_suite(project, loops)
        runs = {
            "simpler": _simpler(project, tests),
            "xdist": _plain(project, "-n", "2", "tests"),
            "simpler --cov": _simpler(
                project, tests, "--cov=tests", "--cov-report", "json:cov.json"
            ),
            "xdist --cov": _plain(project, "-n", "2", "--cov=tests", "tests", env=cov_env),
            "isolated": _simpler(project, tests, "--isolate", "file"),
        }
        m = {name: values["wall"] for name, values in _rounds(runs, repeats).items()}
    suite = f"{tests} tests of {TEST_S * 1000:g} ms in 100 files, medians of {repeats}"
    return [
        _figure("slots: device-free suite, simpler run", m["simpler"], m["xdist"],
                "pytest -n 2 of the same tests", f"--device 0, no -n, no -j; {suite}",
                FREE_GOAL),
        _figure("slots: device-free suite, --cov", m["simpler --cov"], m["xdist --cov"],
                "pytest -n 2 --cov (pytest-cov)", suite, FREE_COV_GOAL),
        _figure("slots: device-free suite, --isolate file", m["isolated"], m["xdist"],
                "pytest -n 2 of the same tests", suite, FREE_ISOLATED_GOAL),
    ]  # fmt: skip


def one_card_suite(repeats: int) -> list[Figure]:
    """One test in ten on the pooled worker: the first of each file."""
    import tempfile

    loops = calibrate(TEST_S)
    with tempfile.TemporaryDirectory(prefix="simpler-bench-slots-") as folder:
        project = Path(folder) / "suite"
        tests = write_suite(project, loops)
        for path in (project / "tests").glob("test_*.py"):
            path.write_text(path.read_text().replace(FIRST_TEST, ON_THE_CARD))
        runs = {
            "simpler": _simpler(project, tests),
            "one process": _plain(
                project, "--simpler-platform", "a5sim", "--simpler-device", "0", "tests"
            ),
        }
        m = {name: values["wall"] for name, values in _rounds(runs, repeats).items()}
    return [
        _figure("slots: one card, one test in ten on it", m["simpler"], m["one process"],
                "one plain pytest process of the same tests",
                f"--device 0, {tests} tests ({tests // 10} on the card), medians of {repeats}",
                ONE_CARD_GOAL),
    ]  # fmt: skip


def _lines(path: Path) -> dict[str, list[int]]:
    files = json.loads(path.read_text())["files"]
    return {name: sorted(data["executed_lines"]) for name, data in files.items()}


def coverage_job(repeats: int) -> list[Figure]:
    """The one-card coverage job in miniature: green under simpler, the same lines measured."""
    import tempfile

    loops = calibrate(COV_JOB_TEST_S)
    cov_env = _with_pytest_cov()
    with tempfile.TemporaryDirectory(prefix="simpler-bench-slots-") as folder:
        project = Path(folder) / "suite"
        tests = write_suite(project, loops, plant=True, files=COV_JOB_FILES)
        ours = project / "ours.json"
        one = project / "one.json"
        isolated = _simpler(project, tests, "--isolate", "file", "--cov=tests",
                            "--cov-report", f"json:{ours}")  # fmt: skip
        coverage_run = [sys.executable, "-m", "coverage", "run", "--source=tests", "-m", "pytest",
                        "-p", "no:cacheprovider", "-q", "tests"]  # fmt: skip
        subprocess.run(
            coverage_run, cwd=project, env=_env(), stdout=subprocess.DEVNULL, check=False
        )
        subprocess.run([sys.executable, "-m", "coverage", "json", "-o", str(one)], cwd=project,
                       env=_env(), stdout=subprocess.DEVNULL, check=True)  # fmt: skip
        runs = {
            "simpler": isolated,
            "one process": _plain(project, "--cov=tests", "tests", env=cov_env),
        }
        m = {name: values["wall"] for name, values in _rounds(runs, repeats).items()}
        if _lines(ours) != _lines(one):
            raise RuntimeError("--isolate file --cov measured other lines than one coverage run")
    return [
        _figure("slots: one-card coverage job, --isolate file --cov", m["simpler"],
                m["one process"], "one pytest --cov process (pytest-cov) of the same tests",
                f"--device 0; {tests} tests of {COV_JOB_TEST_S * 1000:g} ms in {COV_JOB_FILES} "
                f"files, a planted contamination kept out (green), its lines equal to one "
                f"coverage run's; medians of {repeats}", COV_JOB_GOAL),
    ]  # fmt: skip


# A fork of a process that has imported what a unit's process has, then pytest's collection
# of one file, and nothing else: the floor of what an isolated unit can cost.
FORK_AND_COLLECT = """
import gc, os, sys, time
import pytest, numpy
import simpler.plugin.hooks
from simpler.processes.warm_process import warm_pytest
warm_pytest()
gc.freeze()
files = sys.argv[1:]
started = time.perf_counter()
for path in files:
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os._exit(int(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", path])))
    os.waitpid(pid, 0)
print((time.perf_counter() - started) / len(files))
"""
UNIT_GOAL = 1.5
UNIT_FILES = 100


def unit_cost(repeats: int) -> list[Figure]:
    """What an isolated unit costs beyond its tests (``--isolate file -j 1``: the L2 phase
    less its tests, per file) against a fork and its file's collection alone."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="simpler-bench-slots-") as folder:
        project = Path(folder) / "suite"
        tests = write_suite(project, 0, files=UNIT_FILES)  # no work: what is left is the cost
        files = sorted(str(p.relative_to(project)) for p in (project / "tests").glob("test_*"))

        def isolated(scratch: Path) -> dict[str, float]:
            report = scratch / "r.jsonl"
            argv = [*SIMPLER_RUN, "--device", "0", "--report", str(report), "--isolate", "file",
                    "-j", "1", "--phases", "l2,report", "--", "tests"]  # fmt: skip
            _command_seconds(argv, cwd=project, env=_env(), accepted=(0,))
            records = _records(report)
            if (passed := _passed(report)) != tests:
                raise RuntimeError(f"--isolate file -j 1: {passed} of {tests} tests passed")
            (end,) = [r for r in records if r["type"] == "phase" and r.get("event") == "end"
                      and r["phase"] == "l2"]  # fmt: skip
            ran = sum(r["duration_s"] for r in records if r["type"] == "test")
            return {"unit": (end["duration_s"] - ran) / UNIT_FILES}

        def floor(_scratch: Path) -> dict[str, float]:
            argv = [sys.executable, "-c", FORK_AND_COLLECT, *files]
            done = subprocess.run(
                argv, cwd=project, env=_env(), capture_output=True, text=True, check=True
            )
            return {"unit": float(done.stdout.strip().splitlines()[-1])}

        m = _rounds({"isolated": isolated, "floor": floor}, repeats)
    ours, theirs = m["isolated"]["unit"], m["floor"]["unit"]
    return [
        Figure("slots: an isolated unit's cost beyond its tests", ours / theirs,
               "a fork of a warm process and pytest's collection of the file alone",
               f"{ours * 1000:.0f} ms vs {theirs * 1000:.0f} ms a file ({UNIT_FILES} files of "
               f"{tests // UNIT_FILES} empty tests, --isolate file -j 1; medians of {repeats})",
               UNIT_GOAL),
    ]  # fmt: skip


def _fixed_costs(records: list[dict[str, Any]], started: float, ended: float) -> dict[str, float]:
    tests = [r for r in records if r["type"] == "test"]
    first = min(r["ts"] - r["duration_s"] for r in tests)
    last = max(r["ts"] for r in tests)
    return {"before": first - started, "after": ended - last, "wall": ended - started}


def fixed_cost(repeats: int) -> list[Figure]:
    """A run's fixed cost on the scene suite: from the command's start to its first test's,
    and from its last test's end to its exit, against plain ``pytest -n 2``'s of the same
    tests (the plugin writing records there too, for their times)."""
    import time

    from bench_isolation import DEVICES, SUITE

    def timed(argv: list[str], report: Path) -> dict[str, float]:
        started = time.time()
        _command_seconds(argv, env=_env(), accepted=(0,))
        return _fixed_costs(_records(report), started, time.time())

    def ours(scratch: Path) -> dict[str, float]:
        report = scratch / "r.jsonl"
        return timed([*SIMPLER_RUN, "--device", DEVICES, "--report", str(report), "--", SUITE],
                     report)  # fmt: skip

    def plain(scratch: Path) -> dict[str, float]:
        report = scratch / "r.jsonl"
        argv = [*PYTEST, "-n", "2", SUITE, "--simpler-platform", "a5sim", "--simpler-device",
                DEVICES, f"--simpler-report={report}", "-m", "not device_count"]  # fmt: skip
        return timed(argv, report)

    m = _rounds({"simpler": ours, "plain": plain}, repeats)
    a, b = m["simpler"], m["plain"]
    return [
        Figure("slots: scene suite, the time before its first test", a["before"] / b["before"],
               "plain pytest -n 2's (its own collection and xdist's start)",
               f"{a['before']:.2f}s vs {b['before']:.2f}s; medians of {repeats}", None),
        Figure("slots: scene suite, the time after its last test", a["after"] / b["after"],
               "plain pytest -n 2's", f"{a['after']:.2f}s vs {b['after']:.2f}s (simpler's "
               f"Resource phase and report included); medians of {repeats}", None),
    ]  # fmt: skip


def slots_figures(repeats: int) -> list[Figure]:
    return [
        *device_free_suite(repeats),
        *one_card_suite(repeats),
        *coverage_job(repeats),
        *unit_cost(repeats),
        *fixed_cost(repeats),
    ]


if __name__ == "__main__":
    for figure in slots_figures(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        print(f"{figure.name}: {figure.ratio:.3f} (goal {figure.goal}) {figure.detail}")
