"""``simpler report``: its parser, its options read into a ``ReportCommand``, and its entry:
the summary of report files and its exit code, or the files pruned (``--prune-before``)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from simpler.commands.shared import NOTHING_RAN_HELP, QUARANTINE_HELP, cov_request
from simpler.coverage.options import CovRequest, add_cov_arguments
from simpler.usage import OneLineParser, UsageError, options_of, positive_int

__all__ = ["HELP", "ReportCommand", "add_parser", "main", "options"]

PROG = "simpler report"
HELP = "print the summary of report files, set the exit code"
PLAN_HELP = "a plan file of simpler plan (repeatable): a job of it without a report is red"
PRUNE_HELP = (
    "drop the runs that started before this run or ISO date (UTC) from the file, "
    "instead of printing the summary"
)


@dataclass(frozen=True)
class ReportCommand:
    files: tuple[str, ...] = ()  # none: $SIMPLER_REPORT or the default report file
    fail_on_flaky: bool = False
    fail_if_nothing_ran: bool = False
    tail_lines: int = 80
    junit: Path | None = None
    quarantine: Path | None = None
    plan: tuple[Path, ...] = ()
    coverage: CovRequest = field(default_factory=CovRequest)
    timeline: Path | None = None
    prune_before: str | None = None


def add_parser(commands: argparse._SubParsersAction[OneLineParser]) -> None:
    rep = commands.add_parser("report", help=HELP)
    rep.add_argument("--file", action="append", dest="files", help="a report file (repeatable)")
    rep.add_argument("--fail-on-flaky", action="store_true")
    rep.add_argument("--fail-if-nothing-ran", action="store_true", help=NOTHING_RAN_HELP)
    rep.add_argument("--tail-lines", type=positive_int, default=80)
    rep.add_argument("--junit", type=Path, help="write JUnit XML of every test and child here")
    rep.add_argument("--quarantine", type=Path, metavar="F", help=QUARANTINE_HELP)
    rep.add_argument("--plan", type=Path, action="append", default=[], metavar="F", help=PLAN_HELP)
    add_cov_arguments(rep, run=False)
    rep.add_argument(
        "--timeline", type=Path, help="draw the run per device over time (.svg or .html)"
    )
    rep.add_argument("--prune-before", metavar="RUN|DATE", help=PRUNE_HELP)


def options(namespace: argparse.Namespace) -> ReportCommand:
    return options_of(
        ReportCommand,
        namespace,
        files=tuple(namespace.files or ()),
        plan=tuple(namespace.plan),
        coverage=cov_request(namespace),
    )


def main(command: ReportCommand) -> int:
    from simpler.coverage.options import cov_options
    from simpler.orchestrator.quarantine_setup import load_run_quarantine
    from simpler.orchestrator.report_phase import ReportOptions, print_report
    from simpler.reporting import report_file as report
    from simpler.split.missing_jobs import expected_jobs

    files = list(command.files) or [str(report.report_path())]
    if command.prune_before is not None:
        from simpler.reporting.prune import prune_command

        summary_wanted = command.junit is not None or command.timeline is not None
        return prune_command(files, command.prune_before, summary_options=summary_wanted)
    timeline = command.timeline
    if timeline is not None and timeline.suffix.lower() not in (".svg", ".html"):
        raise UsageError(f"{PROG}: --timeline {timeline} must end in .svg or .html")
    summary = ReportOptions.of(
        command,
        coverage=cov_options(command.coverage, PROG),
        timeline=timeline,
        test_quarantine=load_run_quarantine(command.quarantine, PROG),
        planned_jobs=tuple(expected_jobs(command.plan, PROG)),
    )
    return print_report(files, summary)
