"""``simpler affected REV``: the tests a change since REV can break, each with its reasons,
from the impact map in the history (``simpler run --impact-map`` keeps it), without running
anything; its parser, its options read into an ``AffectedCommand``, and its entry."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass

from simpler.contract.settings import HISTORY_ENV
from simpler.usage import OneLineParser, UsageError, options_of, positive_int

__all__ = ["HELP", "PYTEST_ARGS", "AffectedCommand", "add_parser", "main", "options"]

PROG = "simpler affected"
HELP = "the tests a change since REV can break, with their reasons (from the impact map)"
PYTEST_ARGS = True  # what follows -- selects the suite, as pytest's own args
MAX_MAP_AGE = 50


@dataclass(frozen=True)
class AffectedCommand:
    rev: str
    history: str | None = None
    format: str = "text"
    explain: str | None = None
    max_map_age: int = MAX_MAP_AGE
    platform: str = "a5sim"
    verbose: bool = False


def add_parser(commands: argparse._SubParsersAction[OneLineParser]) -> None:
    cmd = commands.add_parser("affected", help=HELP)
    cmd.add_argument("rev", help="the revision the change is since (its line's merge-base)")
    cmd.add_argument("--history", metavar="DB",
                     help=f"the history that keeps the map (default: ${HISTORY_ENV}, else "
                     ".simpler/history.db)")  # fmt: skip
    cmd.add_argument("--format", choices=("text", "json"), default="text")
    cmd.add_argument("--explain", metavar="NODEID", help="why this one test is in or out")
    cmd.add_argument("--max-map-age", type=positive_int, default=MAX_MAP_AGE, metavar="N",
                     help="use no map older than N commits before the merge-base")  # fmt: skip
    cmd.add_argument("--platform", default="a5sim", help="the platform the suite collects on")
    cmd.add_argument("-v", "--verbose", action="store_true",
                     help="every test's reasons, and why each one left out is")  # fmt: skip


def options(namespace: argparse.Namespace) -> AffectedCommand:
    return options_of(AffectedCommand, namespace)


def main(command: AffectedCommand, pytest_args: list[str] | None) -> int:
    from simpler.impact.render import explain, json_document, text_lines
    from simpler.orchestrator.affected_run import decide_for
    from simpler.orchestrator.collection import ListingError, collect_suite

    try:
        listing = collect_suite(command.platform, [0], pytest_args or [])
    except (ValueError, ListingError) as error:
        raise UsageError(f"{PROG}: {error}") from None
    affected = decide_for(command.rev, listing, command.history, command.platform, PROG,
                          command.max_map_age)  # fmt: skip

    if command.explain is not None:
        print(explain(affected, command.explain))
    elif command.format == "json":
        print(json.dumps(json_document(affected), indent=1))
    else:
        print("\n".join(text_lines(affected, every_test=command.verbose)))
    return 0
