"""The ``simpler`` command: parse, validate, hand over to the phases or the report.

Bad input is one line on stderr and exit 2; an unreadable report is exit 3.
Nothing here imports cppyy: the device runner loads in the pytest processes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from simpler.contract import PHASE_ORDER
from simpler.coverage.options import add_cov_arguments, split_cov_args
from simpler.history.schema import HistoryUnusable
from simpler.usage import OneLineParser, UsageError, one_line_exit, positive_int

__all__ = ["main"]

NOTHING_RAN_HELP = "exit 1 when no test ran (every test skipped, or none selected)"
QUARANTINE_HELP = "test quarantine (default: $SIMPLER_QUARANTINE or ./simpler-quarantine.toml)"


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def _build_parser() -> OneLineParser:
    parser = OneLineParser(prog="simpler", description="Test orchestrator for device test suites.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)

    run = commands.add_parser("run", help="run the phases of a suite")
    run.add_argument(
        "--platform",
        required=True,
        help="a5sim, a2a3sim, or one a conftest hook or SIMPLER_RUNNER_LIBRARY provides",
    )
    run.add_argument("--device", required=True, help="device ids: 0, 0-7, 0,2,5, 0,2-4,7")
    run.add_argument("--phases", default=",".join(PHASE_ORDER), help="comma-separated phases")
    run.add_argument(
        "--report", help="report file (default: $SIMPLER_REPORT or .simpler/report.jsonl)"
    )
    run.add_argument("--fail-on-flaky", action="store_true")
    run.add_argument("--fail-if-nothing-ran", action="store_true", help=NOTHING_RAN_HELP)
    run.add_argument("-j", "--max-parallel", type=positive_int)
    run.add_argument("--no-recovery", action="store_true", help="never reset a poisoned worker")
    run.add_argument("--tail-lines", type=positive_int, default=80)
    run.add_argument(
        "--policy",
        choices=("backfill", "fifo"),
        default="backfill",
        help="Resource-phase placement policy",
    )
    run.add_argument(
        "--job-timeout", type=_positive_seconds, help="seconds a Resource child may run"
    )
    run.add_argument(
        "--session-timeout", type=_positive_seconds, help="seconds the Resource phase may run"
    )
    run.add_argument(
        "-x",
        "--exitfirst",
        action="store_true",
        help="stop the Resource phase at the first failed child",
    )
    run.add_argument("--junit", type=Path, help="write JUnit XML of every test and child here")
    run.add_argument("--quarantine", type=Path, metavar="F", help=QUARANTINE_HELP)
    run.add_argument("--shard", metavar="I/N", help="run only the I-th of N balanced shards")
    run.add_argument("--plan", type=Path, metavar="F", help="a plan file of simpler plan")
    run.add_argument("--job", metavar="ID", help="run only this job of --plan's")
    identity = run.add_mutually_exclusive_group()
    identity.add_argument(
        "--run-id",
        help="the run these phases belong to (default: $SIMPLER_RUN_ID; the l2 phase or "
        "--new-run starts a new run, other phases continue the report file's latest)",
    )
    identity.add_argument(
        "--new-run", action="store_true", help="start a new run even without the l2 phase"
    )
    run.add_argument(
        "--shard-durations",
        type=Path,
        help="durations.json that every shard shares, to balance on (default: test counts)",
    )

    run.add_argument(
        "--history",
        type=Path,
        help="import this run into a history database when it ends (default: $SIMPLER_HISTORY)",
    )
    add_cov_arguments(run, run=True)
    run.add_argument(
        "--isolate",
        choices=("file", "test"),
        help="each L2 test file (or test) in a process of its own, as CI proper runs them",
    )
    run.add_argument(
        "--deadline",
        metavar="DURATION",
        help="end the run, summary printed, within DURATION of its start: 90s, 10m, 1h "
        "(default: $SIMPLER_DEADLINE)",
    )

    rep = commands.add_parser("report", help="print the summary of report files, set the exit code")
    rep.add_argument("--file", action="append", dest="files", help="a report file (repeatable)")
    rep.add_argument("--fail-on-flaky", action="store_true")
    rep.add_argument("--fail-if-nothing-ran", action="store_true", help=NOTHING_RAN_HELP)
    rep.add_argument("--tail-lines", type=positive_int, default=80)
    rep.add_argument("--junit", type=Path, help="write JUnit XML of every test and child here")
    rep.add_argument("--quarantine", type=Path, metavar="F", help=QUARANTINE_HELP)
    rep.add_argument(
        "--plan",
        type=Path,
        action="append",
        default=[],
        metavar="F",
        help="a plan file of simpler plan (repeatable): a job of it without a report is red",
    )
    add_cov_arguments(rep, run=False)
    rep.add_argument(
        "--timeline", type=Path, help="draw the run per device over time (.svg or .html)"
    )
    rep.add_argument(
        "--prune-before",
        metavar="RUN|DATE",
        help="drop the runs that started before this run or ISO date (UTC) from the file, "
        "instead of printing the summary",
    )

    sched = commands.add_parser("schedule", help="run (or simulate) device-needing commands")
    sched.add_argument("--devices", required=True, help="the pool: 0, 0-7, 0,2,5, 0,2-4,7")
    sched.add_argument("--policy", choices=("backfill", "fifo"), default="backfill")
    sched.add_argument(
        "--dry-run",
        action="store_true",
        help="simulate on a virtual clock from each job's estimate (measured, else est_s)",
    )
    sched.add_argument("--json", action="store_true", help="print the schedule as JSON")
    sched.add_argument("--job-timeout", type=_positive_seconds)
    sched.add_argument("--session-timeout", type=_positive_seconds)
    sched.add_argument("-x", "--exitfirst", action="store_true")
    sched.add_argument("--tail-lines", type=positive_int, default=80)
    sched.add_argument("jobs", metavar="JOBS.json")

    # Dispatched before parsing (it has its own parser); listed here so --help names it.
    commands.add_parser("capacity", help="device-count capacity report", add_help=False)
    commands.add_parser("history", help="flake scores, quarantine, durations", add_help=False)
    commands.add_parser("plan", help="a CI matrix planned by device size", add_help=False)

    life = commands.add_parser("lifecycle", help="the worker lifecycle diagram")
    life.add_argument("--mermaid", action="store_true", required=True)
    return parser


def main(argv: list[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["capacity"]:
        from simpler.capacity.command import main as capacity_main

        return capacity_main(args_list[1:])
    if args_list[:1] == ["history"]:
        from simpler.history.command import main as history_main

        return history_main(args_list[1:])
    if args_list[:1] == ["plan"]:
        from simpler.fleet.command import main as plan_main

        return plan_main(args_list[1:])
    own, pytest_args = _split_pytest_args(args_list)
    # Locks, logs, the report, the history database: the machine failed us, not the user.
    return one_line_exit("simpler", lambda: _dispatch(own, pytest_args), infra=(HistoryUnusable,))


def _dispatch(own: list[str], pytest_args: list[str]) -> int:
    if own[:1] == ["run"]:
        # pytest-cov's spellings after -- are simpler's own: no child may see them.
        pytest_args, cov_args = split_cov_args(pytest_args)
        own = [*own, *cov_args]
    args = _build_parser().parse_args(own)
    if args.command == "run":
        return _run(args, pytest_args)
    if pytest_args:
        raise UsageError(f"simpler {args.command}: unexpected arguments after --")
    if args.command == "report":
        return _report(args)
    if args.command == "schedule":
        return _schedule(args)
    return _lifecycle()


def _schedule(args: argparse.Namespace) -> int:
    from simpler.scheduler.command import JobsFileError, run_schedule

    try:
        return run_schedule(args)
    except JobsFileError as error:
        raise UsageError(str(error)) from None


def _split_pytest_args(argv: list[str]) -> tuple[list[str], list[str]]:
    if "--" in argv:
        cut = argv.index("--")
        return argv[:cut], argv[cut + 1 :]
    return argv, []


def _run(args: argparse.Namespace, pytest_args: list[str]) -> int:
    from simpler.orchestrator.prepare import prepare_run
    from simpler.orchestrator.run import run_phases

    prepared = prepare_run(args, pytest_args)
    if prepared is None:
        return 0  # this share of a split suite is empty: nothing to run is not a failure
    ctx, phases = prepared
    return run_phases(ctx, phases)


def _report(args: argparse.Namespace) -> int:
    from simpler.coverage.options import cov_options
    from simpler.orchestrator.quarantine_setup import load_run_quarantine
    from simpler.orchestrator.report_phase import ReportOptions, print_report
    from simpler.reporting import report_file as report
    from simpler.share.missing_jobs import expected_jobs

    files = args.files or [str(report.report_path())]
    if args.prune_before is not None:
        from simpler.reporting.prune import prune_command

        summary_wanted = args.junit is not None or args.timeline is not None
        return prune_command(files, args.prune_before, summary_options=summary_wanted)
    if args.timeline is not None and args.timeline.suffix.lower() not in (".svg", ".html"):
        raise UsageError(f"simpler report: --timeline {args.timeline} must end in .svg or .html")
    options = ReportOptions.of(
        args,
        coverage=cov_options(args, "simpler report"),
        timeline=args.timeline,
        test_quarantine=load_run_quarantine(args.quarantine, "simpler report"),
        planned_jobs=tuple(expected_jobs(args.plan, "simpler report")),
    )
    return print_report(files, options)


def _lifecycle() -> int:
    from recovery.diagram import mermaid

    print(mermaid(), end="")
    return 0
