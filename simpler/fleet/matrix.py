"""The CI matrix ``simpler plan`` asked for (a ``PlanOptions``), planned by device size from a
capacity registry or a collected suite, printed and written.

A registry's units are its enabled per-commit registrations, a suite's its L2 files and
Resource tests (``simpler.fleet.suite_units``); docs/fleet.md, "Plan". Bad input raises
UsageError, PlanError or InputError (exit 2).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from simpler.base.atomic_write import write_atomically
from simpler.capacity.model import suite_label
from simpler.capacity.registry import load_registry
from simpler.capacity.sizing import device_count
from simpler.contract import EXIT_OK
from simpler.fleet.options import PlanOptions
from simpler.fleet.planner import Unit, plan
from simpler.fleet.render import github_matrix, plan_document, plan_table
from simpler.fleet.suite_units import suite_units
from simpler.history.durations_export import L2_STARTUP_KEY
from simpler.scheduler.durations import Measured, measurements_of
from simpler.usage import UsageError

__all__ = ["print_matrix"]

PROG = "simpler plan"


def print_matrix(args: PlanOptions, pytest_args: list[str] | None) -> int:
    """The matrix of ``--registry`` or of the suite of ``pytest_args`` (what follows ``--``;
    None without one), printed and written to ``--out``."""
    if (args.registry is None) == (pytest_args is None):
        raise UsageError(f"{PROG}: plan a --registry F or a suite (-- PYTEST_ARGS), one")
    durations = _durations(args.durations) if args.durations else {}
    unsized = 0
    if args.registry is not None:  # else the suite of pytest_args: one of the two
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
