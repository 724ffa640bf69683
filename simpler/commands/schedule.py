"""``simpler schedule``: run (or, with --dry-run, simulate) device-needing commands on a pool;
its parser, its options read into a ``ScheduleOptions``, and its entry.

JOBS.json is a list of ``{"label", "devices" (a count), "cmd" (argv; "{devices}"
becomes the allocated range), "est_s"}``. A real run records what each job took in
``.simpler/durations.json``; the next run (and ``--dry-run``) prefers that over ``est_s``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simpler.contract import EXIT_FAILED, EXIT_OK
from simpler.devices import format_devices, parse_devices
from simpler.scheduler.jobs import Job
from simpler.scheduler.policies import POLICIES
from simpler.usage import OneLineParser, UsageError, options_of, positive_int, positive_number

if TYPE_CHECKING:
    from simpler.reporting.records import ChildRecord
    from simpler.scheduler.durations import Estimator

__all__ = ["HELP", "ScheduleOptions", "add_parser", "load_jobs", "main", "options"]

HELP = "run (or simulate) device-needing commands"


@dataclass(frozen=True)
class ScheduleOptions:
    devices: str  # the pool as typed: main parses it, so its error names it
    jobs: Path
    policy: str = "backfill"
    dry_run: bool = False
    json: bool = False
    job_timeout: float | None = None
    session_timeout: float | None = None
    exitfirst: bool = False
    tail_lines: int = 80


def add_parser(commands: argparse._SubParsersAction[OneLineParser]) -> None:
    seconds = positive_number("seconds")
    sched = commands.add_parser("schedule", help=HELP)
    sched.add_argument("--devices", required=True, help="the pool: 0, 0-7, 0,2,5, 0,2-4,7")
    sched.add_argument("--policy", choices=POLICIES, default=POLICIES[0])
    sched.add_argument(
        "--dry-run",
        action="store_true",
        help="simulate on a virtual clock from each job's estimate (measured, else est_s)",
    )
    sched.add_argument("--json", action="store_true", help="print the schedule as JSON")
    sched.add_argument("--job-timeout", type=seconds)
    sched.add_argument("--session-timeout", type=seconds)
    sched.add_argument("-x", "--exitfirst", action="store_true")
    sched.add_argument("--tail-lines", type=positive_int, default=80)
    sched.add_argument("jobs", metavar="JOBS.json")


def options(namespace: argparse.Namespace) -> ScheduleOptions:
    return options_of(ScheduleOptions, namespace, jobs=Path(namespace.jobs))


def main(args: ScheduleOptions) -> int:
    try:
        return _schedule(args)
    except JobsFileError as error:  # a jobs file or pool the user wrote: one line, exit 2
        raise UsageError(str(error)) from None


class JobsFileError(ValueError):
    """JOBS.json is missing, not JSON, or holds a bad entry: a usage error."""


def load_jobs(path: Path) -> list[Job]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise JobsFileError(f"cannot read jobs file {path}: {error.strerror}") from None
    except (UnicodeDecodeError, ValueError) as error:
        raise JobsFileError(f"jobs file {path} is not valid JSON: {error}") from None
    if not isinstance(data, list):
        raise JobsFileError(f"jobs file {path} must hold a JSON list of jobs")
    jobs = [_job(path, entry) for entry in data]
    labels = [j.label for j in jobs]
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise JobsFileError(f"jobs file {path}: duplicate label(s) {', '.join(duplicates)}")
    return jobs


def _job(path: Path, entry: Any) -> Job:
    # Named as the user wrote it: by its label, else by its own text (an index is not).
    where = f"jobs file {path}, job {_excerpt(entry)}"
    if not isinstance(entry, dict):
        raise JobsFileError(f"{where}: expected an object, got {type(entry).__name__}")
    label, count, cmd, est = (entry.get(k) for k in ("label", "devices", "cmd", "est_s"))
    if not isinstance(label, str) or not label:
        raise JobsFileError(f"{where}: 'label' must be a non-empty string")
    where = f"jobs file {path}, job {label!r}"
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise JobsFileError(f"{where}: 'devices' must be a device count of 1 or more")
    if not isinstance(cmd, list) or not cmd or not all(isinstance(a, str) for a in cmd):
        raise JobsFileError(f"{where}: 'cmd' must be a non-empty list of strings")
    if est is not None and (
        isinstance(est, bool)
        or not isinstance(est, int | float)
        or not math.isfinite(est)
        or est < 0
    ):
        raise JobsFileError(f"{where}: 'est_s' must be a number of seconds, 0 or more")
    timeout = entry.get("timeout_s")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
    ):
        raise JobsFileError(f"{where}: 'timeout_s' must be a positive number of seconds")
    return Job(
        label,
        count,
        tuple(cmd),
        None if est is None else float(est),
        None if timeout is None else float(timeout),
    )


def _excerpt(value: object, width: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 3] + "..."


def _schedule(args: ScheduleOptions) -> int:
    from simpler.scheduler.durations import DEFAULT_DURATIONS_PATH, estimator, load_measurements
    from simpler.scheduler.policies import unfittable

    try:
        devices = parse_devices(args.devices)
    except ValueError as error:
        raise JobsFileError(f"simpler schedule: {error}") from None
    jobs = load_jobs(args.jobs)
    too_big = unfittable(jobs, len(devices))
    if too_big:
        names = ", ".join(f"{j.label} needs {j.devices}" for j in too_big)
        raise JobsFileError(
            f"simpler schedule: job(s) can never fit the pool of {len(devices)} device(s): {names}"
        )
    estimate = estimator(load_measurements(DEFAULT_DURATIONS_PATH))
    if args.dry_run:
        return _dry_run(jobs, devices, args, estimate)
    return _real_run(jobs, devices, args, estimate, DEFAULT_DURATIONS_PATH)


def _dry_run(
    jobs: list[Job], devices: list[int], args: ScheduleOptions, estimate: Estimator
) -> int:
    from simpler.scheduler.simulate import dry_run

    schedule = dry_run(jobs, devices, args.policy, estimate)
    by_label = {job.label: job for job in jobs}
    if args.json:
        document = schedule.to_json()
        for entry in document["jobs"]:
            job = by_label[entry["label"]]
            entry["estimate_s"] = estimate(job)
            entry["estimate_from"] = estimate.source(job)
        print(json.dumps(document, indent=2))
        return EXIT_OK
    for p in sorted(schedule.placements, key=lambda p: (p.start_s, p.label)):
        span = f"{p.start_s:9.1f}s -> {p.end_s:9.1f}s"
        source = estimate.source(by_label[p.label])
        print(f"{span}  devices {format_devices(p.devices):>8}  {p.label}  [{source}]")
    print(
        f"makespan {schedule.makespan_s:.1f}s, lower bound {schedule.lower_bound_s:.1f}s, "
        f"utilization {schedule.utilization:.0%} ({args.policy})"
    )
    return EXIT_OK


def _real_run(
    jobs: list[Job],
    devices: list[int],
    args: ScheduleOptions,
    estimate: Estimator,
    durations_path: Path,
) -> int:
    from simpler.processes.executor import ExecutorOptions, execute
    from simpler.reporting.resource_block import render_resource_failures
    from simpler.scheduler.durations import record_results

    def announce(result: Any) -> None:
        verdict = "PASS" if result.ok else "FAIL"
        print(
            f"{verdict}  {result.label}  devices={format_devices(result.devices) or '-'}  "
            f"{result.duration_s:.1f}s",
            flush=True,
        )

    options = ExecutorOptions(
        estimate=estimate,
        policy=args.policy,
        job_timeout_s=args.job_timeout,
        session_timeout_s=args.session_timeout,
        exit_first=args.exitfirst,
        tail_lines=args.tail_lines,
        on_finish=None if args.json else announce,
    )
    execution = execute(jobs, devices, options)
    # What each job took feeds the next run's estimates; a lost record costs only those.
    try:
        record_results(durations_path, execution.results)
    except OSError as error:
        print(f"simpler schedule: durations not recorded: {error}", file=sys.stderr)
    records = [_as_child_record(r, jobs) for r in execution.results]
    if args.json:
        print(json.dumps(_as_json(execution.results), indent=2))
    else:
        failures = render_resource_failures(records, tail_lines=args.tail_lines)
        if failures:
            print(failures, file=sys.stdout)
        if execution.stopped_by:
            print(f"simpler schedule: stopped by {execution.stopped_by}")
    return EXIT_OK if execution.ok else EXIT_FAILED


def _as_child_record(result: Any, jobs: list[Job]) -> ChildRecord:
    from simpler.reporting.records import ChildRecord

    record: dict[str, Any] = result.serialize()
    job = next(j for j in jobs if j.label == result.label)
    if not any("pytest" in arg for arg in job.argv):
        record["reached_summary"] = True  # only pytest children have a summary line to reach
    return ChildRecord(record)


def _as_json(results: list[Any]) -> dict[str, Any]:
    makespan = max((r.end_s for r in results), default=0.0)
    return {
        "makespan_s": makespan,
        "jobs": [
            {
                "label": r.label,
                "devices": r.devices,
                "start_s": r.start_s,
                "end_s": r.end_s,
                "returncode": r.returncode,
                "signal": r.signal,
                "timed_out": r.timed_out,
            }
            for r in results
        ],
    }
