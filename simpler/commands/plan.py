"""``simpler plan``: a CI matrix planned by device size; its parser, its options read into a
``PlanOptions``, and its entry.

Its synopsis is in docs/reference.md, "Commands"; what is planned, in
simpler/fleet/matrix.py. Bad input is one line and exit 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from simpler.fleet.options import FORMATS, PlanOptions
from simpler.usage import OneLineParser, one_line_exit, options_of, positive_int, positive_number

if TYPE_CHECKING:
    from simpler.fleet.planner import RunnerClass

__all__ = ["HELP", "PYTEST_ARGS", "add_parser", "main", "options"]

PROG = "simpler plan"
HELP = "a CI matrix planned by device size"
PYTEST_ARGS = True  # -- PYTEST_ARGS: plan that suite instead of a --registry


def add_parser(commands: argparse._SubParsersAction[OneLineParser]) -> None:
    parser = commands.add_parser(
        "plan", help=HELP, description="A CI matrix planned by device size.", refuses_unknown=True
    )
    parser.add_argument("--registry", type=Path, metavar="F")
    parser.add_argument("--platform", default="a5sim", help="to collect the suite on")
    parser.add_argument("--runners", type=_runner_classes, required=True, metavar="DEV=LABEL,...")
    size = parser.add_mutually_exclusive_group(required=True)
    size.add_argument("--target-minutes", type=positive_number("minutes"), metavar="M")
    size.add_argument("--jobs", type=_job_counts, metavar="DEV=N,...")
    parser.add_argument("--durations", type=Path, metavar="F")
    parser.add_argument("--startup-seconds", type=float, default=20.0, metavar="S",
                        help="what starting one run costs a job (default 20)")  # fmt: skip
    parser.add_argument("--phase-startup", type=_phase_startups, default={},
                        metavar="PHASE=S,...", help="what starting a phase costs a job that "
                        "has it, e.g. l2=3 (default: the durations file's startup:l2)")  # fmt: skip
    parser.add_argument("--out", type=Path, metavar="F", help="write the plan file")
    parser.add_argument("--format", choices=FORMATS, default="table")


def options(namespace: argparse.Namespace) -> PlanOptions:
    return options_of(PlanOptions, namespace, runners=tuple(namespace.runners))


def main(args: PlanOptions, pytest_args: list[str] | None) -> int:
    from simpler.capacity.model import InputError
    from simpler.fleet.matrix import print_matrix
    from simpler.fleet.planner import PlanError

    # Its own guard: its errors name `simpler plan`, and a plan that cannot be made is bad input.
    return one_line_exit(
        PROG, lambda: print_matrix(args, pytest_args), usage=(PlanError, InputError)
    )


def _runner_classes(text: str) -> list[RunnerClass]:
    from simpler.fleet.planner import RunnerClass

    pairs = _pairs(text, "DEV=LABEL")
    return [RunnerClass(positive_int(devices), label) for devices, label in pairs]


def _job_counts(text: str) -> dict[int, int]:
    return {positive_int(d): positive_int(n) for d, n in _pairs(text, "DEV=N")}


def _phase_startups(text: str) -> dict[str, float]:
    seconds = positive_number("seconds")
    startups = {phase: seconds(value) for phase, value in _pairs(text, "PHASE=S")}
    unknown = sorted(set(startups) - {"l2", "resource"})
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown phase {', '.join(unknown)} (l2, resource)")
    return startups


def _pairs(text: str, shape: str) -> list[tuple[str, str]]:
    """``KEY=VALUE,...`` pairs; ``shape`` is what the option's items look like."""
    pairs = [item.partition("=") for item in text.split(",") if item.strip()]
    if not pairs or any(not key or not sep or not value for key, sep, value in pairs):
        raise argparse.ArgumentTypeError(f"expected {shape},... got {text!r}")
    return [(key.strip(), value.strip()) for key, _, value in pairs]
