"""What ``simpler history`` asked for (a ``HistoryOptions``): open the database, hand over to
the subcommand, print what it did. Bad input raises UsageError (exit 2); a database that is
not one (a text file, a truncated file, a newer schema), HistoryUnusable (exit 3).
"""

from __future__ import annotations

import time
from pathlib import Path

from simpler.contract import EXIT_OK
from simpler.history.options import HistoryOptions
from simpler.history.store import (
    Connection,
    is_server,
    open_store,
    store_label,
    store_ref,
    store_title,
)
from simpler.history.window import Window, select_window
from simpler.usage import UsageError

__all__ = ["run_subcommand"]

PROG = "simpler history"


def run_subcommand(args: HistoryOptions) -> int:
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
