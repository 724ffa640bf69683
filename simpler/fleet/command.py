"""``simpler plan``: a CI matrix planned by device size from a capacity registry.

    simpler plan (--registry F | [--platform P] -- PYTEST_ARGS)
                 --runners 1=cpu-1,2=gpu-2,8=gpu-8 (--target-minutes M | --jobs 1=3,8=1)
                 [--durations F] [--startup-seconds S] [--out plan.json]
                 [--format table|json|github]

From a registry, each enabled per-commit registration is a unit: its devices from its
suite's ``N-gpu`` token (a suite without one is planned as one device, and the table says
how many), its time from the durations file (``simpler history durations``: its
``file:PATH`` or ``PATH`` key) or else its ``est_time``. From a suite (pytest's collection
of PYTEST_ARGS, as ``simpler run`` collects it), the units are its L2 files and Resource
tests (``simpler.fleet.suite_units``); ``simpler run --plan F --job ID`` runs one job's
share. Bad input is one line and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from simpler.capacity.model import InputError, suite_label
from simpler.capacity.registry import load_registry
from simpler.capacity.sizing import device_count
from simpler.contract import EXIT_OK
from simpler.fleet.planner import PlanError, RunnerClass, Unit, plan
from simpler.fleet.render import github_matrix, plan_document, plan_table
from simpler.fleet.suite_units import suite_units
from simpler.history.durations_export import L2_STARTUP_KEY
from simpler.reporting.atomic_write import write_atomically
from simpler.scheduler.durations import Measured, measurements_of
from simpler.usage import (
    OneLineParser,
    UsageError,
    one_line_exit,
    options_of,
    positive_int,
    positive_number,
)

__all__ = ["PlanOptions", "build_parser", "main", "options"]

PROG = "simpler plan"


@dataclass(frozen=True)
class PlanOptions:
    runners: tuple[RunnerClass, ...]
    registry: Path | None = None  # None: plan the suite of the pytest args after --
    platform: str = "a5sim"
    target_minutes: float | None = None
    jobs: Mapping[int, int] | None = None
    durations: Path | None = None
    startup_seconds: float = 20.0
    phase_startup: Mapping[str, float] = field(default_factory=dict)
    out: Path | None = None
    format: str = "table"


def options(namespace: argparse.Namespace) -> PlanOptions:
    return options_of(PlanOptions, namespace, runners=tuple(namespace.runners))


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    return one_line_exit(PROG, lambda: _plan_command(argv), usage=(PlanError, InputError))


def _plan_command(argv: list[str]) -> int:
    pytest_args = argv[argv.index("--") + 1 :] if "--" in argv else None
    own = argv[: argv.index("--")] if "--" in argv else argv
    args = options(build_parser().parse_args(own))
    if (args.registry is None) == (pytest_args is None):
        raise UsageError(f"{PROG}: plan a --registry F or a suite (-- PYTEST_ARGS), one")
    return _plan(args, pytest_args)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=PROG, description="A CI matrix planned by device size.")
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
    parser.add_argument("--format", choices=("table", "json", "github"), default="table")
    return parser


def _plan(args: PlanOptions, pytest_args: list[str] | None) -> int:
    durations = _durations(args.durations) if args.durations else {}
    unsized = 0
    if args.registry is not None:  # else the suite of pytest_args (_plan_command: one of two)
        units, unsized = _registry(args.registry, durations)
    else:
        units = _suite(args.platform, pytest_args or [], durations)
    target_s = args.target_minutes * 60 if args.target_minutes else None
    startups = _phase_startups_of(args.phase_startup, durations)
    made = plan(units, args.runners, target_s=target_s, jobs=args.jobs,
                startup_s=args.startup_seconds, phase_startup_s=startups)  # fmt: skip
    if pytest_args is not None:
        document = plan_document(made, str, platform=args.platform)
    else:
        document = plan_document(made, int)
    if args.out:
        text = json.dumps(document, indent=1) + "\n"
        write_atomically(args.out, lambda stream: stream.write(text.encode()))
    if args.format == "json":
        print(json.dumps(document, indent=1))
    elif args.format == "github":
        print(github_matrix(made))
    else:
        print(plan_table(made, dict(Counter(unit.source for unit in units))), end="")
        shown = "".join(f", {phase} {seconds:.1f} s" for phase, seconds in sorted(startups.items()))
        print(f"start-ups: run {args.startup_seconds:.1f} s{shown}")
        if unsized:
            print(f"note: {unsized} registration(s) without an N-gpu suite planned as 1 device")
    return EXIT_OK


def _phase_startups_of(
    given: Mapping[str, float], durations: dict[str, Measured]
) -> dict[str, float]:
    """``--phase-startup``'s, else what the durations file measured (``startup:l2``)."""
    startups = dict(given)
    measured = durations.get(L2_STARTUP_KEY)
    if "l2" not in startups and measured is not None:
        startups["l2"] = measured.seconds
    return startups


def _registry(path: Path, durations: dict[str, Measured]) -> tuple[list[Unit], int]:
    """The registry's units (keyed by index, named by file and suite) and how many had no
    device count."""
    units: list[Unit] = []
    unsized = 0
    for index, registration in enumerate(load_registry(path, lenient=False).registrations):
        if not (registration.enabled and registration.per_commit):
            continue
        devices = device_count(registration.suite)
        unsized += devices is None
        measured = durations.get(f"file:{registration.filename}") or durations.get(
            registration.filename
        )
        seconds, source = (
            (measured.seconds, "durations") if measured else (registration.est_time, "estimate")
        )
        shown = f"{registration.filename} (suite {suite_label(registration.suite)})"
        units.append(Unit(str(index), max(devices or 1, 1), seconds, source, shown=shown))
    return units, unsized


def _suite(platform: str, pytest_args: list[str], durations: dict[str, Measured]) -> list[Unit]:
    from simpler.orchestrator.collection import ListingError, collect_suite

    try:
        listing = collect_suite(platform, [0], pytest_args)
    except (ListingError, ValueError) as error:
        raise UsageError(f"{PROG}: {error}") from None
    return suite_units(listing, durations)


def _durations(path: Path) -> dict[str, Measured]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise UsageError(f"--durations {path}: not a durations file ({error})") from None
    if not isinstance(document, dict):
        raise UsageError(f"--durations {path}: not a durations file (not a JSON object)")
    return measurements_of(document)


def _runner_classes(text: str) -> list[RunnerClass]:
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
