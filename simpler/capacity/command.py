"""``simpler capacity``: parse the flags, run the stages, print the report, pick the exit code.

Exit codes: 0 the report was printed; 2 bad flags or bad input (an unreadable or invalid
registry, a test file that does not parse, ``--step-summary`` outside GitHub Actions,
``--pool`` while the scheduler's dry run is not built, ``--nightly`` without ``--pool``).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from simpler.capacity.aggregate import Capacity, aggregate, backend_slot
from simpler.capacity.model import InputError, Loaded, Registration, suite_label
from simpler.capacity.pool_spec import PoolSpec, parse_pool_spec
from simpler.capacity.registry import load_registry
from simpler.capacity.render import SECTIONS, render_markdown
from simpler.capacity.render_json import render_json
from simpler.capacity.step_summary import append_step_summary, step_summary_path
from simpler.contract import EXIT_OK, EXIT_USAGE
from simpler.usage import OneLineParser, UsageError, options_of

if TYPE_CHECKING:
    from simpler.capacity.pool import PoolResult

__all__ = ["CapacityOptions", "build_parser", "main", "options"]

PROG = "simpler capacity"
UNSIZED_NAMES_SHOWN = 20  # the warning stays one readable line; the report lists them all


@dataclass(frozen=True)
class CapacityOptions:
    registry: tuple[Path, ...] = ()
    collect: tuple[str, ...] = ()
    section: str = "summary"
    format: str = "markdown"
    step_summary: bool = False
    backend: tuple[str, ...] = ()
    pool: PoolSpec | None = None
    nightly: bool = False
    lenient: bool = False


def options(namespace: argparse.Namespace) -> CapacityOptions:
    return options_of(
        CapacityOptions,
        namespace,
        registry=tuple(namespace.registry),
        collect=tuple(namespace.collect),
        backend=tuple(namespace.backend),
    )


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROG,
        description="How many device slots the suites need, per device count and backend.",
    )
    parser.add_argument(
        "--registry",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="registrations as a JSON list or JSON Lines (repeatable)",
    )
    parser.add_argument(
        "--collect",
        nargs="+",
        default=[],
        metavar="PATH",
        help="scene test files or directories; device counts from their device_count markers "
        "(or, where a conftest.py defines pytest_simpler_device_count, from pytest's collection)",
    )
    parser.add_argument(
        "--section",
        choices=SECTIONS,
        default="summary",
        help="which markdown section to print (default: summary)",
    )
    parser.add_argument("--format", choices=("markdown", "json"), default="markdown")
    parser.add_argument(
        "--step-summary",
        action="store_true",
        help="also append the markdown to $GITHUB_STEP_SUMMARY (kept under 1 MiB)",
    )
    parser.add_argument(
        "--backend",
        action="append",
        default=[],
        metavar="NAME",
        help="only this backend's registrations, in every section, the JSON and the pool "
        "(repeatable; amd and rocm are one)",
    )
    parser.add_argument(
        "--pool",
        type=parse_pool_spec,
        metavar="N|BACKEND=N,...",
        help="simulate the enabled per-commit registrations on N devices, or each backend "
        "on its own pool (cuda=8,amd=8,npu=16)",
    )
    parser.add_argument(
        "--nightly",
        action="store_true",
        help="--pool simulates the night's registrations instead of the per-commit ones",
    )
    parser.add_argument(
        "--lenient",
        action="store_true",
        help="warn about bad entries and skip them instead of failing",
    )
    return parser


def main(argv: Sequence[str]) -> int:
    try:
        args = options(build_parser().parse_args(list(argv)))
    except UsageError as exc:
        _error(str(exc))
        return EXIT_USAGE
    except SystemExit as exc:  # argparse exits on --help; callers want a code
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        return _run(args)
    except InputError as exc:
        _error(str(exc))
        return EXIT_USAGE


def _run(args: CapacityOptions) -> int:
    if not args.registry and not args.collect:
        raise InputError("nothing to report: give --registry FILE and/or --collect PATHS")
    if args.nightly and args.pool is None:
        raise InputError("--nightly chooses what --pool simulates: give --pool too")
    # Checked before any input is read, so that a run that cannot finish prints nothing.
    dry_run = None
    if args.pool is not None:
        from simpler.capacity.pool import PoolUnavailable, load_dry_run  # only --pool needs it

        try:
            dry_run = load_dry_run()
        except PoolUnavailable as exc:
            raise InputError(str(exc)) from None
    summary_file = step_summary_path() if args.step_summary else None
    loaded = _load(args.registry, args.collect, lenient=args.lenient)
    for warning in loaded.warnings:
        _warn(warning)
    registrations = _on_backends(loaded.registrations, args.backend)
    capacity = aggregate(registrations)
    _warn_unsized(capacity)
    pools: list[PoolResult] = []
    if dry_run is not None and args.pool is not None:  # the dry run is loaded for --pool only
        from simpler.capacity.pool import simulate_pools

        pools = simulate_pools(registrations, args.pool, dry_run, nightly=args.nightly)
    markdown = render_markdown(capacity, args.section, pools)
    _print(render_json(capacity, pools) if args.format == "json" else markdown)
    if summary_file is not None and append_step_summary(summary_file, markdown):
        _warn("the step summary was cut to stay under GitHub's 1 MiB limit")
    return EXIT_OK


def _load(registries: Sequence[Path], collect_paths: Sequence[str], *, lenient: bool) -> Loaded:
    # Tens of thousands of small, acyclic containers: the cyclic collector would walk them
    # again and again while they pile up, for nothing; reference counting frees them all.
    gc.disable()
    try:
        return _load_all(registries, collect_paths, lenient=lenient)
    finally:
        gc.enable()


def _load_all(registries: Sequence[Path], collect_paths: Sequence[str], *, lenient: bool) -> Loaded:
    loaded = Loaded()
    for registry in registries:
        loaded.extend(load_registry(registry, lenient=lenient))
    if collect_paths:
        from simpler.capacity.collect import collect  # ast and fnmatch: only for --collect

        loaded.extend(collect(collect_paths, lenient=lenient))
    return loaded


def _on_backends(registrations: list[Registration], names: Sequence[str]) -> list[Registration]:
    """The registrations of the ``--backend`` names (all without one); a name with none is said."""
    if not names:
        return registrations
    wanted = {backend_slot(name) for name in names}
    kept = [r for r in registrations if backend_slot(r.backend) in wanted]
    found = {backend_slot(r.backend) for r in kept}
    for name in names:
        if backend_slot(name) not in found:
            present = sorted({r.backend for r in registrations}) or ["none"]
            _warn(f"--backend {name}: no registrations on it (backends: {', '.join(present)})")
    return kept


def _warn_unsized(capacity: Capacity) -> None:
    """Unsized suites are never silent: name how many and (the first) which."""
    names = capacity.unsized_suite_names()
    if not names:
        return
    shown = ", ".join(suite_label(name) for name in names[:UNSIZED_NAMES_SHOWN])
    rest = len(names) - UNSIZED_NAMES_SHOWN
    more = f", and {rest} more" if rest > 0 else ""
    suites = "suite" if len(names) == 1 else "suites"
    _warn(
        f"{len(names)} unsized {suites} (no device-count token, or tokens that disagree): "
        f"{shown}{more}"
    )


def _print(text: str) -> None:
    try:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # `simpler capacity | head` closed the pipe: not our error. Point stdout at devnull
        # so that the interpreter's final flush does not raise it again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _warn(message: str) -> None:
    print(f"{PROG}: warning: {message}", file=sys.stderr)


def _error(message: str) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr)
