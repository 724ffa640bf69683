"""``simpler capacity``: how many device slots the suites need; its parser, its options read
into a ``CapacityOptions``, and its entry. It reads registries only, and its start-up is
most of a small report's time: the report's modules load in main, not here."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from simpler.capacity.options import FORMATS, SECTIONS, CapacityOptions
from simpler.usage import OneLineParser, options_of

if TYPE_CHECKING:
    from simpler.capacity.pool_spec import PoolSpec

__all__ = ["HELP", "PARSES_DASHES", "add_parser", "main", "options"]

HELP = "device-count capacity report"
PARSES_DASHES = True  # a -- is its parser's to refuse, as it always was


def add_parser(commands: argparse._SubParsersAction[OneLineParser]) -> None:
    parser = commands.add_parser(
        "capacity",
        help=HELP,
        description="How many device slots the suites need, per device count and backend.",
        refuses_unknown=True,
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
    parser.add_argument("--format", choices=FORMATS, default="markdown")
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
        type=_pool_spec,
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


def options(namespace: argparse.Namespace) -> CapacityOptions:
    return options_of(
        CapacityOptions,
        namespace,
        registry=tuple(namespace.registry),
        collect=tuple(namespace.collect),
        backend=tuple(namespace.backend),
    )


def main(args: CapacityOptions) -> int:
    from simpler.capacity.report import print_report

    return print_report(args)


def _pool_spec(text: str) -> PoolSpec:
    from simpler.capacity.pool_spec import parse_pool_spec

    try:
        return parse_pool_spec(text)
    except ValueError as error:  # its message names the bad part: argparse says it as is
        raise argparse.ArgumentTypeError(str(error)) from None
