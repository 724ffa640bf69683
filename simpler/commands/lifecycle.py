"""``simpler lifecycle --mermaid``: the worker lifecycle diagram; its parser, its options read
into a ``LifecycleOptions``, and its entry."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from simpler.usage import OneLineParser, options_of

__all__ = ["HELP", "LifecycleOptions", "add_parser", "main", "options"]

HELP = "the worker lifecycle diagram"


@dataclass(frozen=True)
class LifecycleOptions:
    mermaid: bool = True  # the only drawing there is; required, so that a second can come


def add_parser(commands: argparse._SubParsersAction[OneLineParser]) -> None:
    life = commands.add_parser("lifecycle", help=HELP)
    life.add_argument("--mermaid", action="store_true", required=True)


def options(namespace: argparse.Namespace) -> LifecycleOptions:
    return options_of(LifecycleOptions, namespace)


def main(_options: LifecycleOptions) -> int:
    from recovery.diagram import mermaid

    print(mermaid(), end="")
    return 0
