"""``simpler history``: the history of many runs; its parser (a subcommand each: import,
flaky, show, quarantine, durations, html, copy, prune), its options read into one
``HistoryOptions``, and its entry.

Exit codes: 0 done; 2 bad flags, a report that is not a report, a bad quarantine file;
3 a database that is not one (a text file, a truncated file, a newer schema) or a file
the machine cannot read or write. Every error is one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from simpler.contract.settings import HISTORY_ENV, QUARANTINE_ENV
from simpler.history.options import HistoryOptions
from simpler.usage import OneLineParser, one_line_exit, options_of, positive_int, positive_number

__all__ = ["HELP", "PARSES_DASHES", "add_parser", "main", "options"]

PROG = "simpler history"
HELP = "flake scores, quarantine, durations"
PARSES_DASHES = True  # a -- is its parser's: `copy -- SRC DST` ends the options, as argparse has it
FORMATS = ("table", "json", "markdown")


def add_parser(commands: argparse._SubParsersAction[OneLineParser]) -> None:
    parser = commands.add_parser(
        "history", help=HELP, description="The history of many runs.", refuses_unknown=True
    )
    # The subcommand's dest is the top level's too (it overwrites "history"), so that its
    # errors name the argument `command`, as they always have.
    subcommands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)

    imp = _with_db(subcommands.add_parser("import", help="import report files into the history"))
    imp.add_argument("reports", nargs="+", type=Path, metavar="REPORT")
    imp.add_argument("--commit", help="the commit the runs tested (default: CI's, else git's)")
    imp.add_argument("--branch", help="the branch (default: CI's, else git's)")
    imp.add_argument("--runner", help="the runner label (default: CI's runner, else the host)")

    flaky = _with_window(_with_db(subcommands.add_parser("flaky", help="flake scores per test")))
    flaky.add_argument("--min-runs", type=positive_int, default=1, metavar="K")
    flaky.add_argument("--format", choices=FORMATS, default="table")

    show = _with_window(_with_db(subcommands.add_parser("show", help="one test's runs as a strip")))
    show.add_argument("nodeid", metavar="NODEID")

    _add_quarantine(subcommands)

    durations = _with_window(
        _with_db(subcommands.add_parser("durations", help="learned durations from the history"))
    )
    durations.add_argument("--out", type=Path, required=True, metavar="F")

    html = _with_window(_with_db(subcommands.add_parser("html", help="a static page to look at")))
    html.add_argument("out", type=Path, metavar="OUT.html")

    copy = subcommands.add_parser("copy", help="copy every run of one history into another")
    copy.add_argument("source", metavar="SRC", help="a history file or postgresql:// URL")
    copy.add_argument("target", metavar="DST", help="a history file or postgresql:// URL")

    prune = _with_db(subcommands.add_parser("prune", help="drop the runs before a date"))
    prune.add_argument("--before", required=True, metavar="DATE", help="ISO date (UTC)")
    prune.add_argument("--vacuum", action="store_true", help="give the space back to the disk")


def _add_quarantine(subcommands: argparse._SubParsersAction[OneLineParser]) -> None:
    quarantine = _with_window(
        _with_db(subcommands.add_parser("quarantine", help="entries the scores call for"))
    )
    what = quarantine.add_mutually_exclusive_group(required=True)
    what.add_argument("--suggest", action="store_true", help="flaky tests to quarantine")
    what.add_argument("--release", action="store_true", help="entries whose tests now pass")
    quarantine.add_argument("--write", action="store_true", help="apply them to the file")
    quarantine.add_argument(
        "--quarantine",
        type=Path,
        metavar="F",
        help=f"the quarantine file (default: ${QUARANTINE_ENV} or ./simpler-quarantine.toml)",
    )
    quarantine.add_argument("--threshold", type=_rate, default=0.05, help="least flake rate")
    quarantine.add_argument("--min-runs", type=positive_int, default=10, metavar="K")
    quarantine.add_argument(
        "--passes", type=positive_int, default=20, metavar="N", help="green runs in a row"
    )
    quarantine.add_argument(
        "--runners", type=positive_int, default=2, metavar="K",
        help="of at least K runner labels, where the history has several",
    )  # fmt: skip
    quarantine.add_argument("--owner", help="the owner written into suggested entries")
    quarantine.add_argument(
        "--days", type=positive_int, default=30, help="expiry of suggested entries (<= 90)"
    )


def _with_db(parser: OneLineParser) -> OneLineParser:
    parser.add_argument(
        "--db",
        metavar="DB",
        help="the database file or a postgresql:// URL "
        f"(default: ${HISTORY_ENV} or .simpler/history.db)",
    )
    return parser


def _with_window(parser: OneLineParser) -> OneLineParser:
    window = parser.add_mutually_exclusive_group()
    window.add_argument(
        "--window", type=positive_number("days"), metavar="DAYS", help="the last DAYS"
    )
    window.add_argument("--runs", type=positive_int, metavar="N", help="the last N runs")
    parser.add_argument("--branch", help="only the runs of this branch")
    return parser


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a rate in (0, 1], got {text!r}")
    return value


def options(namespace: argparse.Namespace) -> HistoryOptions:
    """The subcommand's options, typed; the fields of the other subcommands keep defaults."""
    return options_of(HistoryOptions, namespace, reports=tuple(getattr(namespace, "reports", ())))


def main(args: HistoryOptions) -> int:
    import sqlite3

    from simpler.history.subcommands import run_subcommand

    # Its own guard: its errors name `simpler history`, and SQLite's are the machine's (exit 3).
    return one_line_exit(PROG, lambda: run_subcommand(args), infra=(sqlite3.Error,))
