"""The capacity report ``simpler capacity`` asked for (a ``CapacityOptions``): run the stages,
print the report, pick the exit code.

Exit codes: 0 the report was printed; 2 bad input (an unreadable or invalid registry, a test
file that does not parse, ``--step-summary`` outside GitHub Actions, ``--pool`` while the
scheduler's dry run is not built, ``--nightly`` without ``--pool``).
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from simpler.capacity.aggregate import Capacity, aggregate, backend_slot
from simpler.capacity.model import InputError, Loaded, Registration, suite_label
from simpler.capacity.options import CapacityOptions
from simpler.capacity.registry import load_registry
from simpler.capacity.render import render_markdown
from simpler.capacity.render_json import render_json
from simpler.capacity.step_summary import append_step_summary, step_summary_path
from simpler.contract import EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    from simpler.capacity.pool import PoolResult

__all__ = ["print_report"]

PROG = "simpler capacity"
UNSIZED_NAMES_SHOWN = 20  # the warning stays one readable line; the report lists them all


def print_report(args: CapacityOptions) -> int:
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
