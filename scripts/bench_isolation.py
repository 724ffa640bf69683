"""What a process of its own costs: a Resource child's start-up, the scene suite against plain
pytest-xdist, and ``--isolate file`` against one pytest process.

``python scripts/bench_isolation.py [REPEATS]`` prints the figures ``isolation_figures`` hands
to ``nox -s bench``:

- a Resource child's start-up (its ``child`` record's duration less its test's), the mean
  over the scene suite's three Resource tests, forked from a warm process
  (``SIMPLER_FORK_CHILDREN=1``) against a fresh interpreter each (``=0``);
- the whole scene suite under ``simpler run`` against plain ``pytest -n 2`` of the same
  93 tests (``PLAIN_SCENE``): the plugin active (``--simpler-platform``: the ``worker``
  fixture), its two-device Resource tests inside the xdist workers, and its one-device one in
  a pytest of its own (plain pytest hands a test all the devices it was given);
- a generated suite of 100 files x 10 tests of ~20 ms of CPU each, ``--isolate file -j 2``
  against one plain pytest process; a planted contamination must fail the one process and
  pass isolated.

The measured runs get the bench's environment without a run's own variables, coverage's,
or PYTHONDONTWRITEBYTECODE (see bench_coverage's ``_env``).
"""

from __future__ import annotations

import json
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import Figure, _command_seconds
from bench_coverage import _env

__all__ = [
    "calibrate",
    "child_startups",
    "isolation_figures",
    "isolation_suite",
    "scene_suite",
    "startup_figures",
    "write_suite",
]

SUITE, DEVICES = "tests/st", "0-1"
SIMPLER_RUN = (sys.executable, "-m", "simpler", "run", "--platform", "a5sim", "--device", DEVICES)
STARTUP_GOAL, SCENE_GOAL, ISOLATION_GOAL = 0.3, 1.15, 1.0
RESOURCE_TESTS, SCENE_TESTS = 3, 93
# Plain pytest gives every test all of --simpler-device: the one-device Resource test needs a
# pytest of its own on one device (under simpler run, the scheduler allocates it one).
ONE_DEVICE_TEST = "tests/st/test_multi_device.py::TestSingleDeviceSoftmax"
PYTEST = (sys.executable, "-m", "pytest", "-p", "no:cacheprovider")
PLAIN_SCENE = (
    (*PYTEST, "-n", "2", "-q", SUITE, "--simpler-platform", "a5sim", "--simpler-device", DEVICES,
     "--deselect", ONE_DEVICE_TEST),
    (*PYTEST, "-q", ONE_DEVICE_TEST, "--simpler-platform", "a5sim", "--simpler-device", "0"),
)  # fmt: skip
FILES, TESTS_PER_FILE, TEST_S = 100, 10, 0.020
PLAIN_SUITE = (*PYTEST, "-q", "tests")
WORK = """\
def work(loops: int) -> int:
    total = 0
    for i in range(loops):
        total = (total * 31 + i) % 1_000_003
    return total
"""
# The planted contamination: the first file leaves a module global set, the last one's test
# asserts it unset (it passes in a process of its own, fails after the first in one process).
PLANTED = "planted_state"
LEAVES_SET = f"\n\ndef test_leaves_state_set() -> None:\n    {PLANTED}.LEFT_SET = True\n"
FINDS_UNSET = f"\n\ndef test_finds_state_unset() -> None:\n    assert not {PLANTED}.LEFT_SET\n"
Run = Callable[[Path], dict[str, float]]  # a run in a fresh folder: what it measured


def _rounds(runs: dict[str, Run], repeats: int) -> dict[str, dict[str, float]]:
    """The median of each run's measures over ``repeats`` rounds, after a warm-up round that
    is dropped (page cache, .pyc files, the compiled-library cache). Each round starts at the
    next run, so that none always follows another; each call gets a fresh folder."""
    names = list(runs)
    measured: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory(prefix="simpler-bench-isolation-") as folder:
        for index in range(repeats + 1):
            shift = index % len(names)
            for name in names[shift:] + names[:shift]:
                scratch = Path(folder) / f"{name}-{index}"
                scratch.mkdir()
                value = runs[name](scratch)
                shutil.rmtree(scratch)
                if index:
                    measured[name].append(value)
    return {
        name: {key: statistics.median(m[key] for m in measures) for key in measures[0]}
        for name, measures in measured.items()
    }


def _records(report: Path) -> list[dict[str, Any]]:
    with report.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def _passed(report: Path) -> int:
    return sum(1 for r in _records(report) if r["type"] == "test" and r["outcome"] == "passed")


def child_startups(report: Path) -> list[float]:
    """Each Resource child's start-up: its ``child`` record's duration less its test's."""
    records = _records(report)
    tests = {r["nodeid"]: r["duration_s"] for r in records if r["type"] == "test"}
    return [
        float(c["duration_s"]) - float(tests[c["nodeid"]]) for c in records if c["type"] == "child"
    ]


def _startup(fork: str) -> Run:
    def run(scratch: Path) -> dict[str, float]:
        report = scratch / "r.jsonl"
        argv = [*SIMPLER_RUN, "--phases", "resource", "--new-run", "--report", str(report)]
        _command_seconds([*argv, "--", SUITE], env=_env(SIMPLER_FORK_CHILDREN=fork), accepted=(0,))
        startups = child_startups(report)
        if len(startups) != RESOURCE_TESTS:
            raise RuntimeError(f"{len(startups)} Resource children, not {RESOURCE_TESTS}")
        children = [r["duration_s"] for r in _records(report) if r["type"] == "child"]
        return {"startup": statistics.mean(startups), "child": statistics.mean(children)}

    return run


def startup_figures(repeats: int) -> list[Figure]:
    fork, fresh = _rounds({"fork": _startup("1"), "fresh": _startup("0")}, repeats).values()
    return [
        Figure(
            "child start-up: forked from a warm process",
            fork["startup"] / fresh["startup"],
            "a fresh interpreter per child (SIMPLER_FORK_CHILDREN=0)",
            f"{fork['startup']:.3f}s vs {fresh['startup']:.3f}s (child less test, mean of the "
            f"scene suite's {RESOURCE_TESTS} Resource tests; whole child {fork['child']:.3f}s "
            f"vs {fresh['child']:.3f}s; medians of {repeats})",
            STARTUP_GOAL,
        )
    ]


def _scene_simpler(scratch: Path) -> dict[str, float]:
    report = scratch / "r.jsonl"
    seconds = _command_seconds([*SIMPLER_RUN, "--report", str(report), "--", SUITE],
                               env=_env(), accepted=(0,))  # fmt: skip
    if (passed := _passed(report)) != SCENE_TESTS:
        raise RuntimeError(f"simpler run passed {passed} tests, not {SCENE_TESTS}")
    ends = [r for r in _records(report) if r["type"] == "phase" and r.get("event") == "end"]
    return {"wall": seconds, **{r["phase"]: r["duration_s"] for r in ends}}


def _scene_plain(_scratch: Path) -> dict[str, float]:
    walls = [_command_seconds(list(argv), env=_env(), accepted=(0,)) for argv in PLAIN_SCENE]
    return {"wall": sum(walls), "xdist": walls[0]}


def scene_suite(repeats: int) -> list[Figure]:
    ours, plain = _rounds({"simpler": _scene_simpler, "plain": _scene_plain}, repeats).values()
    commands = " && ".join(shlex.join(["pytest", *argv[3:]]) for argv in PLAIN_SCENE)
    return [
        Figure(
            "scene suite: simpler run",
            ours["wall"] / plain["wall"],
            "plain pytest -n 2 of the same 93 tests",
            f"{ours['wall']:.2f}s (l2 phase {ours['l2']:.2f}s, resource {ours['resource']:.2f}s)"
            f" vs {plain['wall']:.2f}s (the -n 2 part {plain['xdist']:.2f}s); medians of "
            f"{repeats}, devices {DEVICES}; plain: {commands}",
            SCENE_GOAL,
        )
    ]


def _work_function() -> Callable[[int], int]:
    scope: dict[str, Callable[[int], int]] = {}
    exec(WORK, scope)  # the generated tests' own code, measured here
    return scope["work"]


def calibrate(seconds: float = TEST_S) -> int:
    """The loops of ``WORK`` that take ``seconds`` of this process's CPU, measured once."""
    work, loops = _work_function(), 1_000
    while True:
        started = time.process_time()
        work(loops)
        spent = time.process_time() - started
        if spent >= 0.1:
            return max(1, round(loops * seconds / spent))
        loops *= 4


def write_suite(root: Path, loops: int, *, plant: bool = False, files: int | None = None) -> int:
    """A project of ``files`` (default ``FILES``) test files of ``TESTS_PER_FILE`` tests, each
    ``work(loops)``; returns its tests. ``plant``: the first and the last file get
    ``LEAVES_SET`` and ``FINDS_UNSET``."""
    files = FILES if files is None else files
    tests = root / "tests"
    tests.mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\n")  # the rootdir: no config of the checkout
    (tests / f"{PLANTED}.py").write_text("LEFT_SET = False\n")
    body = "".join(f"\n\ndef test_{t}() -> None:\n    assert work(LOOPS) >= 0\n"
                   for t in range(TESTS_PER_FILE))  # fmt: skip
    for index in range(files):
        extra = {0: LEAVES_SET, files - 1: FINDS_UNSET}.get(index, "") if plant else ""
        head = f"import {PLANTED}\n\nLOOPS = {loops}\n\n\n{WORK}"
        (tests / f"test_{index:03d}.py").write_text(head + body + extra)
    return files * TESTS_PER_FILE + (2 if plant else 0)


def _isolated(report: Path) -> list[str]:
    return [*SIMPLER_RUN, "--isolate", "file", "-j", "2", "--phases", "l2,report",
            "--report", str(report), "--", "tests"]  # fmt: skip


def check_contamination(folder: Path) -> str:
    """The planted suite (no work in its tests): red in one process, green isolated."""
    project = folder / "planted"
    tests = write_suite(project, 0, plant=True)
    one = subprocess.run([*PLAIN_SUITE], cwd=project, env=_env(), capture_output=True, text=True)
    failed = f"FAILED tests/test_{FILES - 1:03d}.py::test_finds_state_unset"
    if (
        one.returncode != 1
        or failed not in one.stdout
        or f"1 failed, {tests - 1} passed" not in one.stdout
    ):
        raise RuntimeError(f"the planted contamination did not fail one process: {one.stdout}")
    report = folder / "planted.jsonl"
    _command_seconds(_isolated(report), cwd=project, env=_env(), accepted=(0,))
    if (passed := _passed(report)) != tests:
        raise RuntimeError(f"--isolate file passed {passed} of the planted suite's {tests}")
    return f"planted contamination: one process red, --isolate file green ({passed} passed)"


def isolation_suite(repeats: int) -> list[Figure]:
    loops = calibrate()
    with tempfile.TemporaryDirectory(prefix="simpler-bench-isolation-") as folder:
        project = Path(folder) / "suite"
        tests = write_suite(project, loops)
        contamination = check_contamination(Path(folder))

        def isolated(scratch: Path) -> dict[str, float]:
            report = scratch / "r.jsonl"
            seconds = _command_seconds(_isolated(report), cwd=project, env=_env(), accepted=(0,))
            if (passed := _passed(report)) != tests:
                raise RuntimeError(f"--isolate file passed {passed} of {tests} tests")
            return {"wall": seconds}

        def plain(_scratch: Path) -> dict[str, float]:
            return {
                "wall": _command_seconds([*PLAIN_SUITE], cwd=project, env=_env(), accepted=(0,))
            }

        ours, one = (
            m["wall"] for m in _rounds({"isolated": isolated, "plain": plain}, repeats).values()
        )
    return [
        Figure(
            f"isolation: {FILES} files x {TESTS_PER_FILE} tests, --isolate file -j 2",
            ours / one,
            "one plain pytest process of the same tests",
            f"{ours:.2f}s vs {one:.2f}s (medians of {repeats}; each "
            f"test {TEST_S * 1000:g} ms of CPU: {loops} loops); {contamination}",
            ISOLATION_GOAL,
        )
    ]


def isolation_figures(repeats: int) -> list[Figure]:
    return [*startup_figures(repeats), *scene_suite(repeats), *isolation_suite(repeats)]


if __name__ == "__main__":
    for figure in isolation_figures(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        print(f"{figure.name}: {figure.ratio:.3f} (goal {figure.goal}) {figure.detail}")
