"""simpler's benchmarks: every figure is a ratio against a baseline measured in the same run.

Run with ``nox -s bench`` (``-- --only NAME`` for one figure). Figures are printed
and written to .simpler/bench.json; the exit code is 1 when a figure misses its goal.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BARE_CPPYY = "import cppyy"
RUNNER_NOOP = (
    "from simpler.runner import open_runner\nr = open_runner('a5sim', 0)\nr.init()\nr.run('noop')\n"
)
NOOP_CHILDREN = "scripts/bench_suite/test_noop_children.py"
REPORT_RECORDS = 100_000
REPORT_FAILURES = 50
RESOURCE_CHILDREN = 80
# Records besides the passed and failed L2 tests: 6 phase records, 3 lifecycle, a poison_skip
# and its test record, a test and a child record per Resource child, and the retried test.
NON_L2_RECORDS = 6 + 3 + 2 + 2 * RESOURCE_CHILDREN + 1
PARSE_REPORT = "import json, sys\nfor line in open(sys.argv[1], 'rb'):\n    json.loads(line)\n"
CAPACITY_REGISTRATIONS = 20_000
LOAD_REGISTRY = "import json, sys\njson.load(open(sys.argv[1]))\n"
CAPACITY_GOAL = 2.0  # issue 13: the whole report within 2x of merely loading the registry
# Suite names as large CI registries spell them; the last ones carry no device-count token.
SUITES = (
    *(f"stage-a-test-{n}-npu-a2" for n in (1, 2, 4)),
    *(f"stage-b-test-{n}-gpu-h100" for n in (1, 2, 4, 8)),
    *(f"stage-c-test-{n}-gpu-h200" for n in (2, 8)),
    "per-commit-1-gpu-b200",
    "per-commit-2-npu-a3",
    *(f"nightly-{n}-npu-a3" for n in (1, 8, 16)),
    "nightly-4-gpu-h100",
    "weekly-8-gpu-b200",
    "stress",
    "perf-regression",
    "mm-gen-qwen3-235b",
)


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


def _process_seconds(code: str, env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    return time.perf_counter() - started


def outside_actions(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without GitHub Actions' switches: under Actions `simpler report` would also
    annotate and append to the step summary, work a measurement must not include."""
    return {k: v for k, v in env.items() if k not in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")}


def _command_seconds(
    argv: list[str],
    *,
    cwd: Path = ROOT,
    env: Mapping[str, str] | None = None,
    accepted: tuple[int, ...] = (0, 1),  # 1: a generated report holds failures, on purpose
) -> float:
    """Wall seconds of one process, its output discarded, outside GitHub Actions' extras."""
    started = time.perf_counter()
    done = subprocess.run(
        argv,
        cwd=cwd,
        env=outside_actions(os.environ if env is None else env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    seconds = time.perf_counter() - started
    if done.returncode not in accepted:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
    return seconds


def _interleaved_medians(
    command: list[str],
    baseline: list[str],
    repeats: int,
    *,
    cwd: Path = ROOT,
    command_env: Mapping[str, str] | None = None,
    baseline_env: Mapping[str, str] | None = None,
    accepted: tuple[int, ...] = (0, 1),
) -> tuple[float, float]:
    """Median wall seconds of ``command`` and ``baseline``, run alternately after one warm-up."""

    def run(argv: list[str], env: Mapping[str, str] | None) -> float:
        return _command_seconds(argv, cwd=cwd, env=env, accepted=accepted)

    run(command, command_env)  # page cache and .pyc files, as any second run finds them
    run(baseline, baseline_env)
    command_times, baseline_times = [], []
    for _ in range(repeats):
        command_times.append(run(command, command_env))
        baseline_times.append(run(baseline, baseline_env))
    return statistics.median(command_times), statistics.median(baseline_times)


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
    from bench_workloads import makespan_figures

    figures = makespan_figures()
    pools = ", ".join(
        f"pool {p}: {v['backfill_over_lower_bound']:.3f}/{v['backfill_over_fifo']:.3f}"
        for p, v in figures["per_pool"].items()
    )
    detail = (
        f"mean over pools 4, 8, 16 x 20 mixed workloads of {figures['n_jobs']} jobs in "
        f"random submission order (what FIFO runs); real runs on wrong estimates: "
        f"learned_durations; {pools}"
    )
    return [
        Figure(
            "scheduler, simulated on exact estimates",
            figures["backfill_over_lower_bound"],
            "the lower bound",
            detail,
            1.05,
        ),
        Figure(
            "scheduler, simulated on exact estimates",
            figures["backfill_over_fifo"],
            "strict FIFO",
            detail,
            0.85,
        ),
    ]


def noop_children_run(report: Path, phases: str, *options: str) -> list[str]:
    """`simpler run` of the 16 one-device no-op Resource children on 4 devices."""
    return [
        *(sys.executable, "-m", "simpler", "run", "--platform", "a5sim", "--device", "0-3"),
        *("--phases", phases, *options, "--report", str(report), "--", NOOP_CHILDREN),
    ]


def resource_phase_wall(_repeats: int) -> list[Figure]:
    from simpler.reporting.report_file import read as read_report

    with tempfile.TemporaryDirectory(prefix="simpler-bench-") as folder:
        report = Path(folder) / "report.jsonl"
        # The scheduler's packing, with children as fresh interpreters: a warm process's
        # one-off start would count against the phase's wall and in no child's run time
        # (what forking children saves is the figure of bench_isolation's child start-up).
        subprocess.run(
            noop_children_run(report, "resource"),
            cwd=ROOT,
            check=True,
            stdout=subprocess.DEVNULL,
            env={**os.environ, "SIMPLER_FORK_CHILDREN": "0"},
        )
        records = read_report(report)
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


def write_report_file(path: Path, records: int = REPORT_RECORDS) -> int:
    """A realistic report of one run with ``records`` records; returns the failures in it."""
    rng = random.Random(6)
    run = "20250101T000000-bench1"
    clock = [1_700_000_000.0]

    def record(phase: str, record_type: str, **fields: object) -> str:
        clock[0] += 0.01
        base = {"schema": 1, "run": run, "ts": round(clock[0], 3), "phase": phase}
        return json.dumps({**base, "type": record_type, **fields}, separators=(",", ":"))

    def tail(nodeid: str, verdict: str, lines: int) -> str:
        body = [f"{nodeid} {verdict}"]
        body += [f"  simpler/runner: launch {i} ok ({rng.random():.4f}s)" for i in range(lines)]
        return "\n".join(body)

    l2_tests = records - NON_L2_RECORDS
    failing = set(rng.sample(range(l2_tests), REPORT_FAILURES))
    lines = [record("l2", "phase", event="start")]
    for index in range(l2_tests):
        module, case = divmod(index, 40)
        nodeid = f"tests/st/ops/test_op_{module:04d}.py::TestOp::test_case_{case:02d}"
        common = {
            "nodeid": nodeid,
            "attempt": 1,
            "runtime": "tensormap_and_ringbuffer",
            "device": index % 8,
            "worker": f"a5sim/tensormap_and_ringbuffer/dev{index % 8}/gw{index % 8}",
            "duration_s": round(rng.uniform(0.01, 0.4), 3),
        }
        if index in failing:
            message = f"GoldenMismatch: matmul: max abs error {rng.uniform(0.1, 9):.3f}"
            lines.append(
                record(
                    "l2",
                    "test",
                    outcome="failed",
                    message=message,
                    **common,
                    tail=tail(nodeid, "FAILED", 12) + f"\nE   {message}",
                )
            )
        else:
            lines.append(
                record(
                    "l2",
                    "test",
                    outcome="passed",
                    message="",
                    **common,
                    tail=tail(nodeid, "PASSED", 3),
                )
            )
    # One hang on device 3 whose card would not reset: the next test waits for a fresh process.
    worker = "a5sim/tensormap_and_ringbuffer/dev3/gw3"
    for source, dest, trigger, rc, where in (
        ("healthy", "poisoned", "device_error", 507046, "aclrtSynchronizeStreamWithTimeout"),
        ("poisoned", "force_reset", "start_force_reset", None, None),
        ("force_reset", "skipped", "give_up", 62, "halResMap"),
    ):
        lines.append(
            record(
                "l2",
                "lifecycle",
                worker=worker,
                source=source,
                dest=dest,
                trigger=trigger,
                rc=rc,
                where=where,
            )
        )
    skipped = "tests/st/ops/test_hang.py::TestHang::test_after_hang"
    lines.append(
        record(
            "l2",
            "poison_skip",
            selector=skipped,
            nodeid=skipped,
            runtime="tensormap_and_ringbuffer",
            reason=f"worker {worker} could not be recovered",
        )
    )
    lines.append(
        record(
            "l2",
            "test",
            nodeid=skipped,
            outcome="poison_skipped",
            attempt=1,
            runtime="tensormap_and_ringbuffer",
            device=3,
            message=f"worker {worker} could not be recovered",
            tail="",
        )
    )
    counts = {"passed": l2_tests - REPORT_FAILURES, "failed": REPORT_FAILURES}
    lines.append(record("l2", "phase", event="end", counts=counts, returncode=1, duration_s=1800.0))
    lines.append(record("resource", "phase", event="start"))
    for index in range(RESOURCE_CHILDREN):
        nodeid = f"tests/st/multi/test_collective_{index:02d}.py::test_allreduce"
        devices = [2 * (index % 4), 2 * (index % 4) + 1]
        lines.append(
            record(
                "resource",
                "test",
                nodeid=nodeid,
                outcome="passed",
                attempt=1,
                runtime="tensormap_and_ringbuffer",
                device=devices[0],
                message="",
                duration_s=3.0,
                tail=tail(nodeid, "PASSED", 3),
            )
        )
        lines.append(
            record(
                "resource",
                "child",
                label=nodeid,
                nodeid=nodeid,
                returncode=0,
                signal=None,
                devices=devices,
                duration_s=3.4,
                timed_out=False,
                reached_summary=True,
                tail=tail(nodeid, "1 passed", 4),
                log=f".simpler/logs/child-{index:02d}.log",
            )
        )
    lines.append(
        record(
            "resource",
            "phase",
            event="end",
            counts={"passed": RESOURCE_CHILDREN},
            returncode=0,
            duration_s=120.0,
        )
    )
    lines.append(record("retry", "phase", event="start"))
    lines.append(
        record(
            "retry",
            "test",
            nodeid=skipped,
            outcome="recovered",
            attempt=2,
            runtime="tensormap_and_ringbuffer",
            device=3,
            message="",
            duration_s=0.2,
            tail=tail(skipped, "PASSED", 3),
        )
    )
    lines.append(
        record("retry", "phase", event="end", counts={"recovered": 1}, returncode=0, duration_s=9.0)
    )
    assert len(lines) == records, (len(lines), records)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return REPORT_FAILURES


def report_summary(repeats: int) -> list[Figure]:
    """`simpler report` on a 100k-record file, against a process that merely parses it."""
    with tempfile.TemporaryDirectory(prefix="simpler-bench-") as folder:
        path = Path(folder) / "report.jsonl"
        failures = write_report_file(path)
        size_mib = path.stat().st_size / 2**20
        report_s, parse_s = _interleaved_medians(
            [sys.executable, "-m", "simpler", "report", "--file", str(path)],
            [sys.executable, "-c", PARSE_REPORT, str(path)],
            repeats,
        )
    return [
        Figure(
            f"report: summary of {REPORT_RECORDS // 1000}k records",
            report_s / parse_s,
            "a process that json.loads every line",
            f"{report_s:.3f}s vs {parse_s:.3f}s on {size_mib:.0f} MiB, {failures} failures "
            f"(medians of {repeats})",
            3.0,
        )
    ]


def write_registry(path: Path, count: int = CAPACITY_REGISTRATIONS) -> None:
    """``count`` registrations over realistic suites: some disabled, nightly, or with no suite.

    Shaped like sglang's export: backends amd and rocm both, disabled NPU registrations with
    ``suite=""``, and fields the report does not read.
    """
    rng = random.Random(10)
    registrations = []
    for index in range(count):
        suite = SUITES[index % len(SUITES)]
        backend = "npu" if "-npu" in suite else rng.choice(("cuda", "amd", "rocm"))
        disabled = "flaky on this backend, see #1234" if index % 53 == 0 else None
        if index % 241 == 0:
            suite, backend, disabled = "", "npu", "not assigned to a suite yet"
        registrations.append(
            {
                "filename": f"test/srt/{suite.split('-')[0]}/test_case_{index:05d}.py",
                "backend": backend,
                "suite": suite,
                "est_time": round(rng.uniform(5, 900), 1),
                "nightly": index % 37 == 0,
                "disabled": disabled,
                "stage": "stage-b",
            }
        )
    path.write_text(json.dumps(registrations, indent=1) + "\n", encoding="utf-8")


def capacity_report(repeats: int) -> list[Figure]:
    """`simpler capacity` on 20k registrations, against a process that merely loads the JSON."""
    with tempfile.TemporaryDirectory(prefix="simpler-bench-") as folder:
        path = Path(folder) / "registry.json"
        write_registry(path)
        capacity_s, load_s = _interleaved_medians(
            [
                sys.executable,
                "-m",
                "simpler",
                "capacity",
                "--registry",
                str(path),
                "--format",
                "json",
            ],
            [sys.executable, "-c", LOAD_REGISTRY, str(path)],
            repeats,
        )
    return [
        Figure(
            f"capacity: {CAPACITY_REGISTRATIONS // 1000}k registrations as JSON",
            capacity_s / load_s,
            "a process that json.load()s the registry",
            f"{capacity_s:.3f}s vs {load_s:.3f}s (medians of {repeats})",
            CAPACITY_GOAL,
        )
    ]


PLAN_GOAL_S = 2.0  # issue 25: 20k registrations on 4 runner classes in under 2 s
PLAN_RUNNERS = "1=gpu-1,2=gpu-2,4=gpu-4,8=gpu-8"


def plan_registry(repeats: int) -> list[Figure]:
    """`simpler plan` of 20k registrations on 4 runner classes: under 2 s, and beside it the
    ratio to a process that merely loads the registry's JSON."""
    with tempfile.TemporaryDirectory(prefix="simpler-bench-") as folder:
        path = Path(folder) / "registry.json"
        write_registry(path)
        argv = [sys.executable, "-m", "simpler", "plan", "--registry", str(path)]
        argv += ["--runners", PLAN_RUNNERS, "--target-minutes", "600", "--format", "json"]
        plan_s, load_s = _interleaved_medians(
            argv, [sys.executable, "-c", LOAD_REGISTRY, str(path)], repeats
        )
    return [
        Figure(
            f"plan: {CAPACITY_REGISTRATIONS // 1000}k registrations on 4 runner classes",
            plan_s / PLAN_GOAL_S,
            f"{PLAN_GOAL_S:g} seconds",
            f"{plan_s:.3f}s; {plan_s / load_s:.1f}x a process that json.load()s the registry "
            f"({load_s:.3f}s; medians of {repeats})",
            1.0,
        )
    ]


# A real suite of a few thousand small tests that use no device: transitions' own tests,
# from its pinned sdist (its test dependencies are in simpler's test extra). Its ini adds -x;
# the user's own flags here drop it, so that every test runs on both sides.
NO_DEVICE_SUITE = ("transitions", "0.9.3")
NO_DEVICE_FLAGS = ("tests", "-q", "-o", "addopts=", "-p", "no:cacheprovider")
PIP_DOWNLOAD_SDIST = (sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary")
PIP_DOWNLOAD_SDIST += (":all:",)
SIMPLER_L2 = (sys.executable, "-m", "simpler", "run", "--platform", "a5sim", "--device", "0-1")
SIMPLER_L2 += ("--phases", "l2")


def _unpacked_sdist(name: str, version: str) -> Path:
    cache = ROOT / ".simpler" / "bench-sdists"
    source = cache / f"{name}-{version}"
    if not source.is_dir():
        cache.mkdir(parents=True, exist_ok=True)
        pin = f"{name}=={version}"
        subprocess.run(
            [*PIP_DOWNLOAD_SDIST, "-d", str(cache), pin],
            check=True,
        )
        with tarfile.open(cache / f"{name}-{version}.tar.gz") as sdist:
            sdist.extractall(cache, filter="data")
    return source


def no_device_l2(repeats: int) -> list[Figure]:
    """Tests that use no device, under simpler's L2 phase vs plain pytest with the same flags."""
    from simpler.reporting.report_file import read as read_report

    source = _unpacked_sdist(*NO_DEVICE_SUITE)
    plain = [sys.executable, "-m", "pytest", *NO_DEVICE_FLAGS]
    plain_times: list[float] = []
    phase_times: list[float] = []
    tests = 0
    for _ in range(repeats):  # interleaved, so a busy neighbour favours neither side
        started = time.perf_counter()
        subprocess.run(plain, cwd=source, stdout=subprocess.DEVNULL, check=False)
        plain_times.append(time.perf_counter() - started)
        with tempfile.TemporaryDirectory(prefix="simpler-bench-") as folder:
            report = Path(folder) / "report.jsonl"
            subprocess.run(
                [*SIMPLER_L2, "--report", str(report), "--", *NO_DEVICE_FLAGS],
                cwd=source,
                stdout=subprocess.DEVNULL,
                check=False,
            )
            records = read_report(report)
        end = next(r for r in records if r["type"] == "phase" and r["event"] == "end")
        phase_times.append(end["duration_s"])
        tests = sum(1 for r in records if r["type"] == "test")
    plain_s, phase_s = statistics.median(plain_times), statistics.median(phase_times)
    name, version = NO_DEVICE_SUITE
    return [
        Figure(
            f"L2 phase, {tests} no-device tests ({name} {version})",
            phase_s / plain_s,
            "plain pytest with the same flags",
            f"{phase_s:.2f}s vs {plain_s:.2f}s (medians of {repeats}; devices 0-1)",
            1.1,
        )
    ]


def _figures(module: str, function: str, repeats: int) -> list[Figure]:
    """A figure measured in a module of its own (imported late: it imports this one)."""
    import importlib

    measured: list[Figure] = getattr(importlib.import_module(module), function)(repeats)
    return measured


BENCHMARKS: dict[str, Callable[[int], list[Figure]]] = {
    "runner_load": runner_load,
    "scheduler": scheduler_makespan,
    "resource_phase": resource_phase_wall,
    "retry_spread": lambda repeats: _figures("bench_recovery", "retry_spread", repeats),
    "fault_scenario": lambda repeats: _figures("bench_recovery", "fault_scenario", repeats),
    "child_startup": lambda repeats: _figures("bench_recovery", "child_startup", repeats),
    "learned_durations": lambda repeats: _figures("bench_durations", "durations_figures", repeats),
    "report_history": lambda repeats: _figures("bench_history", "history_figures", repeats),
    # A long history: its import (at most 3 repeats: each reads 0.5 GB of reports), its
    # scores, and what --history costs a run.
    "history_import": lambda repeats: _figures(
        "bench_history_import", "import_figures", min(repeats, 3)
    ),
    "history_flaky": lambda repeats: _figures("bench_history_flaky", "flaky_figures", repeats),
    "history_run": lambda repeats: _figures(
        "bench_history_run", "run_overhead_figures", min(repeats, 5)
    ),
    # The history on a PostgreSQL server the section starts: its import against the file's,
    # 8 importers at once, and flaky over 1M attempts (at most 3 repeats of the imports).
    "history_server": lambda repeats: _figures("bench_history_server", "server_figures", repeats),
    "report": report_summary,
    "capacity": capacity_report,
    "plan": plan_registry,
    # The scene suite as three planned jobs: earlier runs, then each job, each a few times.
    "fleet": lambda repeats: _figures("bench_fleet", "fleet_figures", min(repeats, 3)),
    "no_device_l2": no_device_l2,
    # `simpler run --cov`: the scene suite in 4 variants a round (at most 5 rounds), and the
    # report's combine of 200 processes' data files against `coverage combine`.
    "coverage_run": lambda repeats: _figures("bench_coverage", "run_figures", min(repeats, 5)),
    "coverage_combine": lambda repeats: _figures("bench_coverage", "combine_figures", repeats),
    # A Resource child forked from the warm process against a fresh interpreter, the scene
    # suite against plain `pytest -n 2`, and --isolate file against one pytest process (a
    # generated suite of 1,000 tests: ~50 s a round, at most 3 rounds).
    "fork_startup": lambda repeats: _figures("bench_isolation", "startup_figures", min(repeats, 5)),
    "scene_vs_xdist": lambda repeats: _figures("bench_isolation", "scene_suite", min(repeats, 5)),
    "isolation": lambda repeats: _figures("bench_isolation", "isolation_suite", min(repeats, 3)),
    # Slots apart from devices (bench_slots.py): a device-free suite of 1,000 tests against
    # pytest -n 2 (plain, --cov, --isolate file: ~90 s a round), one card with one test in ten
    # on it against one process, and the one-card coverage job in miniature (2,000 tests).
    "slots_free": lambda repeats: _figures("bench_slots", "device_free_suite", min(repeats, 3)),
    "slots_one_card": lambda repeats: _figures("bench_slots", "one_card_suite", min(repeats, 3)),
    "slots_cov_job": lambda repeats: _figures("bench_slots", "coverage_job", min(repeats, 3)),
    # An isolated unit's cost beyond its tests against a fork and its file's collection, and
    # the scene suite's time before its first test and after its last against pytest -n 2's.
    "slots_unit_cost": lambda repeats: _figures("bench_slots", "unit_cost", min(repeats, 5)),
    "slots_fixed_cost": lambda repeats: _figures("bench_slots", "fixed_cost", min(repeats, 5)),
    # Per-test selection: simpler affected's decision on a map of 10,000 tests (bench_affected.py).
    "affected": lambda repeats: _figures("bench_affected", "affected_figures", min(repeats, 3)),
    # scripts/replay_affected.py over the last 4 commits (about 3 minutes): safety and the
    # selected share of the suite's time.
    "affected_replay": lambda repeats: _figures("bench_affected", "replay_figures", repeats),
    # The impact map (bench_impact.py): the scene suite with --impact-map against --cov and
    # against no coverage (3 variants a round, at most 5 rounds), and storing a 5,000-test map
    # against `coverage combine` of the same data.
    "impact_run": lambda repeats: _figures("bench_impact", "run_figures", min(repeats, 5)),
    "impact_store": lambda repeats: _figures("bench_impact", "store_figures", repeats),
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
