"""``simpler history``: parse the subcommand, open the database, hand over, pick the exit code.

Exit codes: 0 done; 2 bad flags, a report that is not a report, a bad quarantine file;
3 a database that is not one (a text file, a truncated file, a newer schema) or a file
the machine cannot read or write. Every error is one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from simpler import usage
from simpler.contract import EXIT_OK
from simpler.contract.settings import HISTORY_ENV, QUARANTINE_ENV
from simpler.history.options import HistoryOptions
from simpler.history.store import (
    Connection,
    HistoryUnusable,
    is_server,
    open_store,
    store_label,
    store_ref,
    store_title,
)
from simpler.history.window import Window, select_window
from simpler.usage import OneLineParser, UsageError, one_line_exit, positive_int, positive_number

__all__ = ["build_parser", "main", "options"]

PROG = "simpler history"
FORMATS = ("table", "json", "markdown")


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a rate in (0, 1], got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=PROG, description="The history of many runs.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)

    imp = _with_db(commands.add_parser("import", help="import report files into the history"))
    imp.add_argument("reports", nargs="+", type=Path, metavar="REPORT")
    imp.add_argument("--commit", help="the commit the runs tested (default: CI's, else git's)")
    imp.add_argument("--branch", help="the branch (default: CI's, else git's)")
    imp.add_argument("--runner", help="the runner label (default: CI's runner, else the host)")

    flaky = _with_window(_with_db(commands.add_parser("flaky", help="flake scores per test")))
    flaky.add_argument("--min-runs", type=positive_int, default=1, metavar="K")
    flaky.add_argument("--format", choices=FORMATS, default="table")

    show = _with_window(_with_db(commands.add_parser("show", help="one test's runs as a strip")))
    show.add_argument("nodeid", metavar="NODEID")

    quarantine = _with_window(
        _with_db(commands.add_parser("quarantine", help="entries the scores call for"))
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

    durations = _with_window(
        _with_db(commands.add_parser("durations", help="learned durations from the history"))
    )
    durations.add_argument("--out", type=Path, required=True, metavar="F")

    html = _with_window(_with_db(commands.add_parser("html", help="a static page to look at")))
    html.add_argument("out", type=Path, metavar="OUT.html")

    copy = commands.add_parser("copy", help="copy every run of one history into another")
    copy.add_argument("source", metavar="SRC", help="a history file or postgresql:// URL")
    copy.add_argument("target", metavar="DST", help="a history file or postgresql:// URL")

    prune = _with_db(commands.add_parser("prune", help="drop the runs before a date"))
    prune.add_argument("--before", required=True, metavar="DATE", help="ISO date (UTC)")
    prune.add_argument("--vacuum", action="store_true", help="give the space back to the disk")
    return parser


def _with_db(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument(
        "--db",
        metavar="DB",
        help="the database file or a postgresql:// URL "
        f"(default: ${HISTORY_ENV} or .simpler/history.db)",
    )
    return parser


def _with_window(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    window = parser.add_mutually_exclusive_group()
    window.add_argument(
        "--window", type=positive_number("days"), metavar="DAYS", help="the last DAYS"
    )
    window.add_argument("--runs", type=positive_int, metavar="N", help="the last N runs")
    parser.add_argument("--branch", help="only the runs of this branch")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    return one_line_exit(
        PROG,
        lambda: _dispatch(options(build_parser().parse_args(argv))),
        infra=(HistoryUnusable, sqlite3.Error),
    )


def options(namespace: argparse.Namespace) -> HistoryOptions:
    """The subcommand's options, typed; the fields of the other subcommands keep defaults."""
    return usage.options_of(
        HistoryOptions, namespace, reports=tuple(getattr(namespace, "reports", ()))
    )


def _dispatch(args: HistoryOptions) -> int:
    if args.command == "copy":
        return _copy(args)
    path = store_ref(args.db)
    if args.command == "import":
        return _import(args, path)
    _require_history(path, f"{PROG}", "(simpler history import makes one)")
    if args.command == "prune":
        return _prune(args, path)
    conn = open_store(path, create=False)
    try:
        if args.command == "flaky":
            return _flaky(args, conn)
        if args.command == "show":
            return _show(args, conn)
        if args.command == "quarantine":
            from simpler.history.quarantine_advice import quarantine_command

            return quarantine_command(args, conn)
        if args.command == "durations":
            return _durations(args, conn)
        return _html(args, conn, path)
    finally:
        conn.close()


def _window(args: HistoryOptions) -> Window:
    return select_window(window_days=args.window, last_runs=args.runs, branch=args.branch)


def _require_history(ref: str, prog: str, hint: str = "") -> None:
    """A history file that is not there: a name mistyped, or nothing imported yet, the user's
    to fix (exit 2). A server is asked when it is opened."""
    if not is_server(ref) and not Path(ref).is_file():
        raise UsageError(f"{prog}: no history database {ref}" + (f" {hint}" if hint else ""))


def _import(args: HistoryOptions, path: str) -> int:
    from simpler.history.impact_rows import import_map_files
    from simpler.history.importer import NotAReport, import_reports

    missing = [str(p) for p in args.reports if not p.is_file()]
    if missing:
        raise UsageError(f"{PROG} import: no such report file: {', '.join(missing)}")
    conn = open_store(path)
    try:
        summary = import_reports(
            conn, args.reports, commit=args.commit, branch=args.branch, runner=args.runner
        )
        runs = [*summary.runs_new, *summary.runs_updated]
        maps = import_map_files(conn, args.reports, runs)  # the impact maps their runs kept
    except (NotAReport, ValueError) as error:
        raise UsageError(str(error)) from None
    finally:
        conn.close()
    kept = f", {maps} impact map(s)" if maps else ""
    print(f"{PROG}: {summary}{kept} -> {store_label(path)}")
    return EXIT_OK


def _flaky(args: HistoryOptions, conn: Connection) -> int:
    from simpler.history.render_scores import render_json, render_markdown, render_table
    from simpler.history.scores import compute_scores

    scores = compute_scores(conn, min_runs=args.min_runs, window=_window(args))
    render = {"table": render_table, "json": render_json, "markdown": render_markdown}
    print(render[args.format](scores), end="")
    return EXIT_OK


def _show(args: HistoryOptions, conn: Connection) -> int:
    from simpler.history.show import render_show, test_strip

    marks = test_strip(conn, args.nodeid, window=_window(args))
    print(render_show(args.nodeid, marks), end="")
    return EXIT_OK


def _durations(args: HistoryOptions, conn: Connection) -> int:
    from simpler.history.durations_export import export_durations

    written = export_durations(conn, args.out, window=_window(args))
    print(f"{PROG}: {written} durations -> {args.out}")
    return EXIT_OK


def _html(args: HistoryOptions, conn: Connection, path: str) -> int:
    from simpler.history.page_data import write_page

    write_page(conn, args.out, source=store_title(path), window=_window(args))
    print(f"{PROG}: page -> {args.out}")
    return EXIT_OK


def _copy(args: HistoryOptions) -> int:
    from simpler.history.copy import copy_history

    _require_history(args.source, f"{PROG} copy")
    source = open_store(args.source, create=False)
    try:
        target = open_store(args.target)
        try:
            copied = copy_history(source, target)
        finally:
            target.close()
    finally:
        source.close()
    print(
        f"{PROG}: copied {copied} run(s) {store_label(args.source)} -> {store_label(args.target)}"
    )
    return EXIT_OK


def _prune(args: HistoryOptions, path: str) -> int:
    from simpler.history.prune import parse_before, prune_before

    try:
        before = parse_before(args.before)
    except ValueError as error:
        raise UsageError(f"{PROG} prune: {error}") from None
    conn = open_store(path, create=False)
    try:
        result = prune_before(conn, before, vacuum=args.vacuum)
    finally:
        conn.close()
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(before))
    print(
        f"{PROG}: removed {result.runs_removed} run(s), {result.attempts_removed} attempt(s) "
        f"started before {when} UTC"
    )
    return EXIT_OK
