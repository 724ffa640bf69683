"""Benchmarks of what a fault costs: the retry phase spread over devices, the fault scenario
run three ways, and what simpler adds to a Resource child's start-up.

Every figure is a ratio against a baseline measured in the same run (see bench.py).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import ROOT, Figure, _interleaved_medians, outside_actions

from simpler.contract import PASSING_OUTCOMES
from simpler.contract.child import ChildContract
from simpler.reporting.report_file import read as read_report
from simpler.reporting.report_file import read_records
from simpler.reporting.verdicts import analyze

SUITES = ROOT / "scripts" / "bench_suite"
HEAVY_REPEATS = 3  # whole runs of simpler: a few are enough for a median
SIMPLER_RUN = (sys.executable, "-m", "simpler", "run", "--platform", "a5sim")
OP_TIMEOUT = {"SIMPLER_OP_TIMEOUT_MS": "150"}
# Four workers each poisoned by their first test, and no force reset takes.
SPREAD_FAULTS = "hang@::TestFault::#1,force_reset_fail"
SPREAD_FILES = tuple(f"test_part{i}.py" for i in range(1, 5))
FAULT16_FILES = ("test_a.py", "test_b.py")
FAULT16_TRIGGER = "test_a.py::TestOps::test_vector_add[2]"
TRIVIAL_TEST = """
import pytest

@pytest.mark.device_count(1)
def test_trivial(devices):
    assert len(devices) == 1
"""


def _simpler(args: list[str], cwd: Path, faults: str = "") -> None:
    env = {**outside_actions(os.environ), **OP_TIMEOUT}
    env.pop("SIMPLER_SIM_FAULTS", None)
    if faults:
        env["SIMPLER_SIM_FAULTS"] = faults
    subprocess.run([*SIMPLER_RUN, *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL, check=False)


def _project(folder: Path, source: str, names: tuple[str, ...]) -> Path:
    """A project of its own holding ``source`` once per name: one file per xdist worker."""
    project = folder / "project"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n")
    for name in names:
        shutil.copy(SUITES / source, project / name)
    return project


def _phase_seconds(report: Path, phase: str) -> float:
    ends = [
        r for r in read_report(report)
        if r["type"] == "phase" and r["phase"] == phase and r.get("event") == "end"
    ]  # fmt: skip
    return float(ends[-1]["duration_s"])


def retry_spread(repeats: int) -> list[Figure]:
    """The same registrations retried on 4 devices and on 1: 4 poisoned workers' victims and
    triggers, one fresh process each."""
    repeats = min(repeats, HEAVY_REPEATS)
    with tempfile.TemporaryDirectory(prefix="simpler-bench-") as folder:
        project = _project(Path(folder), "retry_spread/test_part.py", SPREAD_FILES)
        registered = Path(folder) / "l2.jsonl"
        l2 = ["--device", "0-3", "--phases", "l2", "--report", str(registered), "--", "."]
        _simpler(l2, project, SPREAD_FAULTS)
        times: dict[int, list[float]] = {4: [], 1: []}
        devices_used = 0
        for _ in range(repeats):  # interleaved, so a busy neighbour favours neither side
            for count, spec in ((4, "0-3"), (1, "0")):
                report = Path(folder) / f"retry-{count}.jsonl"
                shutil.copy(registered, report)
                retry = ["--device", spec, "--phases", "retry", "--report", str(report)]
                _simpler([*retry, "--", "."], project, SPREAD_FAULTS)
                times[count].append(_phase_seconds(report, "retry"))
                if count == 4:
                    records = read_report(report)
                    devices_used = len(
                        {
                            r["device"]
                            for r in records
                            if r["type"] == "test" and r["phase"] == "retry"
                        }
                    )
    spread_s, serial_s = statistics.median(times[4]), statistics.median(times[1])
    return [
        Figure(
            "retry phase: 4 poisoned workers on 4 devices",
            spread_s / serial_s,
            "the same registrations on 1 device",
            f"{spread_s:.1f}s vs {serial_s:.1f}s (medians of {repeats}); 12 victims, "
            f"4 triggers; {devices_used} devices used; each test holds its card 0.5 s",
            0.6,
        )
    ]


def _fault16(project: Path, report: Path, mode: str) -> tuple[float, int, int]:
    """One whole run; its wall seconds, tests with a real verdict, and tests."""
    faults, extra = f"hang@{FAULT16_TRIGGER}#1", []
    if mode == "skip + fresh-process retry":
        faults += ",force_reset_fail"
    elif mode == "no recovery":
        extra = ["--no-recovery"]
    elif mode == "no fault":
        faults = ""
    args = ["--device", "0-1", *extra, "--report", str(report), "--", "."]
    started = time.perf_counter()
    _simpler(args, project, faults)
    wall = time.perf_counter() - started
    verdicts = analyze(read_records(report).records).verdicts
    # Real: what the test itself did. A test failed by its neighbour's sticky card is not,
    # nor one skipped and never re-run; the trigger's own failure is.
    real = sum(
        1 for nodeid, v in verdicts.items()
        if v.outcome in PASSING_OUTCOMES or nodeid.endswith(FAULT16_TRIGGER)
    )  # fmt: skip
    return wall, real, len(verdicts)


def fault_scenario(repeats: int) -> list[Figure]:
    """A hang among 16 tests on 2 devices: healed in place, skipped and retried in a fresh
    process, or left alone; each against the same suite without the fault."""
    repeats = min(repeats, HEAVY_REPEATS)
    modes = ("no fault", "in-place heal", "skip + fresh-process retry", "no recovery")
    walls: dict[str, list[float]] = {mode: [] for mode in modes}
    real: dict[str, tuple[int, int]] = {}
    with tempfile.TemporaryDirectory(prefix="simpler-bench-") as folder:
        project = _project(Path(folder), "fault16/test_half.py", FAULT16_FILES)
        for round_number in range(repeats):
            for mode in modes:
                report = Path(folder) / f"{round_number}-{mode.replace(' ', '_')}.jsonl"
                wall, verdicts, tests = _fault16(project, report, mode)
                walls[mode].append(wall)
                real[mode] = min(real.get(mode, (tests, tests)), (verdicts, tests))
    base = statistics.median(walls["no fault"])
    figures = []
    # Wall time has no goal: each mode pays for what it does (the trigger's fresh-process
    # attempt, the victims' fresh process, the cascade's retries). What must hold is that no
    # test loses its verdict where simpler recovers.
    for mode in ("in-place heal", "skip + fresh-process retry"):
        wall = statistics.median(walls[mode])
        verdicts, tests = real[mode]
        figures.append(
            Figure(
                f"fault scenario: {mode}",
                wall / base,
                "the same 16 tests on 2 devices without the fault",
                f"{wall:.1f}s vs {base:.1f}s; {verdicts}/{tests} tests with a real verdict "
                f"(fewest of {repeats})",
                None,
            )
        )
        figures.append(
            Figure(
                f"fault scenario: {mode}, verdicts lost",
                (tests - verdicts) / tests,
                "tests in the suite",
                f"{tests - verdicts} of {tests} tests without a real verdict",
                0.0,
            )
        )
    wall = statistics.median(walls["no recovery"])
    verdicts, tests = real["no recovery"]
    figures.append(
        Figure(
            "fault scenario: no recovery (--no-recovery)",
            wall / base,
            "the same 16 tests on 2 devices without the fault",
            f"{wall:.1f}s vs {base:.1f}s; {verdicts}/{tests} tests with a real verdict: "
            "the cascade simpler prevents",
            None,
        )
    )
    return figures


def child_startup(repeats: int) -> list[Figure]:
    """A Resource child's command line, against a bare pytest of the same trivial test."""
    with tempfile.TemporaryDirectory(prefix="simpler-bench-") as folder:
        project = Path(folder)
        (project / "test_trivial.py").write_text(TRIVIAL_TEST)
        (project / "pytest.ini").write_text("[pytest]\n")
        report = project / "report.jsonl"
        from simpler.orchestrator.pytest_args import PytestArgs, resource_child_argv

        child = list(resource_child_argv("test_trivial.py::test_trivial", PytestArgs()))
        told = ChildContract(phase="resource", platform="a5sim", devices="0", report=str(report))
        bare = [sys.executable, "-m", "pytest", "test_trivial.py::test_trivial"]
        child_s, bare_s = _interleaved_medians(
            child,
            bare,
            repeats,
            cwd=project,
            command_env={**os.environ, **told.to_env()},
            baseline_env={k: v for k, v in os.environ.items() if not k.startswith("SIMPLER_")},
            accepted=(0,),
        )
    return [
        Figure(
            "resource child start-up: one trivial test",
            child_s / bare_s,
            "a bare `python -m pytest` of the same test",
            f"{child_s:.3f}s vs {bare_s:.3f}s (medians of {repeats})",
            1.2,
        )
    ]
