"""``simpler run``: its parser, its options read into a ``RunOptions``, and its entry, which
prepares the run from them and runs its phases."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from simpler.commands.shared import NOTHING_RAN_HELP, QUARANTINE_HELP, cov_request
from simpler.contract import PHASE_ORDER
from simpler.contract.settings import (
    DEADLINE_ENV,
    HISTORY_ENV,
    JOB_ENV,
    JOBS_ENV,
    PLAN_ENV,
    REPORT_ENV,
    RUN_ID_ENV,
    RUNNER_LIBRARY_ENV,
)
from simpler.coverage.options import add_cov_arguments
from simpler.orchestrator.options import RunOptions
from simpler.scheduler.policies import POLICIES
from simpler.usage import OneLineParser, options_of, positive_int, positive_number

__all__ = ["HELP", "PYTEST_ARGS", "add_parser", "main", "options"]

HELP = "run the phases of a suite"
PYTEST_ARGS = True  # what follows -- goes to pytest; every other command refuses it
DEADLINE_HELP = (
    "end the run, summary printed, within DURATION of its start: 90s, 10m, 1h "
    f"(default: ${DEADLINE_ENV})"
)
RUN_ID_HELP = (
    f"the run these phases belong to (default: ${RUN_ID_ENV}; the l2 phase or "
    "--new-run starts a new run, other phases continue the report file's latest)"
)


def add_parser(commands: argparse._SubParsersAction[OneLineParser]) -> None:
    seconds = positive_number("seconds")
    run = commands.add_parser("run", help=HELP)
    run.add_argument(
        "--platform",
        required=True,
        help=f"a5sim, a2a3sim, or one a conftest hook or {RUNNER_LIBRARY_ENV} provides",
    )
    run.add_argument("--device", required=True, help="device ids: 0, 0-7, 0,2,5, 0,2-4,7")
    run.add_argument("--phases", default=",".join(PHASE_ORDER), help="comma-separated phases")
    run.add_argument(
        "--report", help=f"report file (default: ${REPORT_ENV} or .simpler/report.jsonl)"
    )
    run.add_argument("--fail-on-flaky", action="store_true")
    run.add_argument("--fail-if-nothing-ran", action="store_true", help=NOTHING_RAN_HELP)
    run.add_argument(
        "-j",
        "--jobs",
        "--max-parallel",
        dest="jobs",
        type=positive_int,
        metavar="N",
        help="processes to keep busy at once, apart from the devices, which are never shared "
        f"(default: ${JOBS_ENV}, else the CPU count)",
    )
    run.add_argument("--no-recovery", action="store_true", help="never reset a poisoned worker")
    run.add_argument("--tail-lines", type=positive_int, default=80)
    run.add_argument(
        "--policy",
        choices=POLICIES,
        default=POLICIES[0],
        help="Resource-phase placement policy",
    )
    run.add_argument("--job-timeout", type=seconds, help="seconds a Resource child may run")
    run.add_argument("--session-timeout", type=seconds, help="seconds the Resource phase may run")
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
    identity.add_argument("--run-id", help=RUN_ID_HELP)
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
        metavar="DB",
        help="import this run into a history (a file or a postgresql:// URL) when it ends "
        f"(default: ${HISTORY_ENV})",
    )
    add_cov_arguments(run, run=True)
    run.add_argument(
        "--impact-map",
        action="store_true",
        help="keep which code each test ran (the impact map of HEAD) in the history: "
        "measures the run with --cov-context test",
    )
    run.add_argument(
        "--affected-since",
        metavar="REV",
        help="run only the tests a change since REV can break, from the impact map "
        "(everything, saying why, where the map cannot tell)",
    )
    run.add_argument(
        "--affected-shadow",
        action="store_true",
        help="with --affected-since: run everything, and say which failures the selection "
        "would have missed",
    )
    run.add_argument(
        "--isolate",
        choices=("file", "test"),
        help="each L2 test file (or test) in a process of its own, as CI proper runs them",
    )
    run.add_argument("--deadline", metavar="DURATION", help=DEADLINE_HELP)


def options(namespace: argparse.Namespace) -> RunOptions:
    """The parsed command line, typed, with the plan and job of the environment filled in."""
    plan_env = os.environ.get(PLAN_ENV, "")
    return options_of(
        RunOptions,
        namespace,
        plan=namespace.plan or (Path(plan_env) if plan_env else None),
        job=namespace.job or os.environ.get(JOB_ENV) or None,
        coverage=cov_request(namespace),
    )


def main(run: RunOptions, pytest_args: list[str] | None) -> int:
    from simpler.orchestrator.prepare import prepare_run
    from simpler.orchestrator.run import run_phases

    prepared = prepare_run(run, pytest_args or [])
    if prepared is None:
        return 0  # this share of a split suite is empty: nothing to run is not a failure
    ctx, phases = prepared
    return run_phases(ctx, phases)
