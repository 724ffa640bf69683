"""The scene suite as three planned jobs, run for real: how evenly they finish, and whether
their three report files merge to the verdicts of one run.

``python scripts/bench_fleet.py`` prints the two figures ``fleet_figures`` hands to
``nox -s bench``:

- slowest job / mean job, each job a ``simpler run --plan F --job ID`` on its own two
  simulated devices and its own report file, planned (``--jobs 2=3``) on the durations
  ``simpler history durations`` wrote from earlier runs of the whole suite (the median of
  each test's, and the L2 phase's start-up, ``startup:l2``), with the start-up of a run
  those runs measured; each job's wall is the median of its runs;
- the tests whose merged verdict (``simpler report`` over the three files, ``--plan``)
  differs from the one run's, and the two exit codes.

Jobs run one after another, so that each has the machine to itself as a runner would, and
with Python's bytecode cache on, as on a runner or a laptop: where PYTHONDONTWRITEBYTECODE is
set, every pytest process compiles and assertion-rewrites simpler's ~140 modules again
(about 1.3 s on a 2-core machine), a start-up no user pays that would swamp the jobs.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import ROOT, Figure, outside_actions

from simpler.reporting.records import PhaseRecord, Record
from simpler.reporting.report_file import read_records
from simpler.reporting.verdicts import decide_verdicts, select_latest_runs
from simpler.scheduler.durations import load_measurements

__all__ = ["fleet_figures"]

SUITE = "tests/st"
DEVICES = "0-1"
BALANCE_GOAL = 1.15  # issue 25
# A run's own variables would steer the bench's runs: each names its report and its share.
STEERING = ("SIMPLER_RUN_ID", "SIMPLER_REPORT", "SIMPLER_PLAN", "SIMPLER_JOB", "SIMPLER_SHARD",
            "SIMPLER_HISTORY", "SIMPLER_QUARANTINE", "PYTHONDONTWRITEBYTECODE")  # fmt: skip


def _env() -> dict[str, str]:
    return {k: v for k, v in outside_actions(os.environ).items() if k not in STEERING}


def _simpler(*args: str, accepted: tuple[int, ...] = (0, 1)) -> tuple[int, float]:
    """Run ``simpler ARGS``: its exit code and wall seconds."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "simpler", *args], cwd=ROOT, env=_env(),
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    seconds = time.perf_counter() - started
    if done.returncode not in accepted:
        raise RuntimeError(f"simpler {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done.returncode, seconds


def _records(*paths: Path) -> list[Record]:
    return select_latest_runs([read_records(path).records for path in paths])


def _run_startup(report: Path, wall_s: float) -> float:
    """What the run spent outside its phases (starting, collecting the suite): the start-up a
    plan adds to each job. The L2 phase's own comes with the durations (``startup:l2``)."""
    phases = [r.duration_s for r in _records(report) if isinstance(r, PhaseRecord) and r.is_end]
    return max(wall_s - sum(phases), 0.1)


def _verdicts(*paths: Path) -> dict[str, str]:
    return {
        nodeid: verdict.outcome for nodeid, verdict in decide_verdicts(_records(*paths)).items()
    }


def fleet_figures(repeats: int) -> list[Figure]:
    with tempfile.TemporaryDirectory(prefix="simpler-bench-fleet-") as folder:
        work = Path(folder)
        db, durations, plan = work / "history.db", work / "durations.json", work / "plan.json"
        startups: list[float] = []
        for index in range(repeats):
            one = work / f"one-{index}.jsonl"
            one_rc, one_wall = _simpler("run", "--platform", "a5sim", "--device", DEVICES,
                                        "--report", str(one), "--", SUITE)  # fmt: skip
            _simpler("history", "import", "--db", str(db), str(one), accepted=(0,))
            startups.append(_run_startup(one, one_wall))
        _simpler("history", "durations", "--db", str(db), "--out", str(durations), accepted=(0,))
        run_startup = statistics.median(startups)
        l2_startup = load_measurements(durations)["startup:l2"].seconds
        _simpler("plan", "--platform", "a5sim", "--runners", "2=runner-2", "--jobs", "2=3",
                 "--durations", str(durations), "--startup-seconds", f"{run_startup:.3f}",
                 "--out", str(plan), "--", SUITE, accepted=(0,))  # fmt: skip
        planned = json.loads(plan.read_text())["jobs"]
        jobs = [job["id"] for job in planned]
        estimated = ", ".join(f"{job['est_wall_s']:.2f}s" for job in planned)
        reports = [work / f"{job}.jsonl" for job in jobs]
        runs: dict[str, list[float]] = {job: [] for job in jobs}
        for _ in range(repeats):  # the jobs in turn, so that a slow spell is shared
            for job, report in zip(jobs, reports, strict=True):
                report.unlink(missing_ok=True)
                runs[job].append(_simpler(
                    "run", "--platform", "a5sim", "--device", DEVICES, "--report", str(report),
                    "--plan", str(plan), "--job", job, "--", SUITE)[1])  # fmt: skip
        walls = [statistics.median(runs[job]) for job in jobs]
        files = [arg for report in reports for arg in ("--file", str(report))]
        merged_rc, _ = _simpler("report", *files, "--plan", str(plan))
        one_verdicts, merged_verdicts = _verdicts(one), _verdicts(*reports)  # the last of each
    differ = sorted(set(one_verdicts.items()) ^ set(merged_verdicts.items()))
    balance = max(walls) / statistics.mean(walls)
    shown = ", ".join(f"{wall:.2f}s" for wall in walls)
    return [
        Figure(
            "fleet: three planned jobs, slowest / mean",
            balance,
            "the mean job",
            f"jobs {shown} (medians of {repeats}; planned {estimated}); one run "
            f"{one_wall:.2f}s, the matrix {max(walls) / one_wall:.2f} of it; planned on "
            f"{repeats} runs, start-ups: run {run_startup:.2f}s, l2 {l2_startup:.2f}s",
            BALANCE_GOAL,
        ),
        Figure(
            "fleet: merged verdicts unlike one run's",
            len({nodeid for nodeid, _ in differ}) + (merged_rc != one_rc),
            "none",
            f"{len(one_verdicts)} tests; exit {merged_rc} merged, {one_rc} in one run",
            0.0,
        ),
    ]


if __name__ == "__main__":
    for figure in fleet_figures(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        print(f"{figure.name}: {figure.ratio:.3f} (goal {figure.goal}) {figure.detail}")
