"""``simpler history quarantine --suggest | --release [--write]``: what the scores call for.

``--suggest`` names flaky tests (never broken, never device-sensitive) at or above
``--threshold`` over ``--min-runs`` runs that no entry covers yet; ``--release`` the entries
whose tests passed their last ``--passes`` runs across ``--runners`` runner labels. Both only
print; ``--write`` adds or removes whole ``[[quarantine]]`` blocks (docs/history.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import TypeVar

from simpler.contract.settings import QUARANTINE_ENV
from simpler.history.model import TestScore
from simpler.history.options import HistoryOptions
from simpler.history.scores import compute_scores
from simpler.history.show import test_strip
from simpler.history.store.connection import Connection
from simpler.history.window import Window, select_window, window_runs
from simpler.reporting.quarantine_file import (
    MAX_DAYS_AHEAD,
    QUARANTINE_FILE_NAME,
    QuarantineEntry,
    QuarantineFile,
    QuarantineFileError,
    add_entries,
    entry_block,
    load_quarantine,
    remove_entries,
)
from simpler.usage import UsageError

__all__ = ["Release", "quarantine_command", "releases", "suggestions"]

PROG = "simpler history quarantine"
_T = TypeVar("_T")
_COUNTS_AS_PASS = "."  # "R" had a test-caused failure in the run: the streak ends there
_SAYS_NOTHING = frozenset("DIs")


@dataclass(frozen=True)
class Release:
    entry: QuarantineEntry
    passes: int  # the shortest streak of green runs among the tests it covers
    runners: tuple[str, ...]  # the runner labels those streaks ran on


def suggestions(
    scores: Sequence[TestScore],
    quarantine: QuarantineFile | None,
    *,
    threshold: float,
    min_runs: int,
) -> list[TestScore]:
    """The scores of the tests to quarantine, in the scores' order (worst first)."""
    return [
        score
        for score in scores
        if score.state == "flaky"
        and score.failed_test > 0
        and score.flake_rate >= threshold
        and score.runs >= min_runs
        and (quarantine is None or quarantine.entry_for(score.nodeid) is None)
    ]


def releases(
    conn: Connection,
    quarantine: QuarantineFile,
    *,
    passes: int,
    runners: int,
    window: Window,
) -> list[Release]:
    """The entries whose covered tests each passed ``passes`` runs in a row on enough runners."""
    runs = window_runs(conn, window)
    runner_of = {run.run_id: run.runner or "unknown" for run in runs}
    needed = max(1, min(runners, len({run.runner for run in runs if run.runner})))
    # Every test any run held, from the suites (a few thousand rows), not the verdicts (a
    # million): the same node ids, as every stored run names its suite.
    known = [row[0] for row in conn.execute("SELECT DISTINCT nodeid FROM suite_tests")]
    found = []
    for entry in quarantine.entries:
        covered = [nodeid for nodeid in known if entry.covers(nodeid)]
        streaks = [_streak(conn, nodeid, runner_of, window) for nodeid in covered]
        # Every test it covers, each on enough runners of its own: a prefix entry is not let
        # go because one of its tests passed here and another there.
        if streaks and all(n >= passes and len(seen) >= needed for n, seen in streaks):
            labels = tuple(sorted(set().union(*(seen for _, seen in streaks))))
            found.append(Release(entry, min(n for n, _ in streaks), labels))
    return found


def _streak(
    conn: Connection, nodeid: str, runner_of: dict[str, str], window: Window
) -> tuple[int, set[str]]:
    """How many runs in a row, newest first, ``nodeid`` passed; the runners they ran on."""
    length, labels = 0, set()
    for mark in reversed(test_strip(conn, nodeid, window=window)):
        if mark.mark in _SAYS_NOTHING:
            continue
        if mark.mark != _COUNTS_AS_PASS:
            break
        length += 1
        labels.add(runner_of.get(mark.run_id, "unknown"))
    return length, labels


def quarantine_command(args: HistoryOptions, conn: Connection) -> int:
    """The subcommand: print the advice, and apply it with ``--write``."""
    window = select_window(window_days=args.window, last_runs=args.runs, branch=args.branch)
    path = _file_path(args.quarantine)
    quarantine = _load(path) if path.is_file() else None
    if args.suggest:
        return _suggest(args, conn, path, quarantine, window)
    if quarantine is None:
        raise UsageError(f"{PROG} --release: no quarantine file {path}")
    return _release(args, conn, path, quarantine, window)


def _suggest(
    args: HistoryOptions,
    conn: Connection,
    path: Path,
    quarantine: QuarantineFile | None,
    window: Window,
) -> int:
    if args.days > MAX_DAYS_AHEAD:
        raise UsageError(f"{PROG}: --days {args.days}: at most {MAX_DAYS_AHEAD}")
    scores = compute_scores(conn, min_runs=args.min_runs, window=window)
    chosen = suggestions(scores, quarantine, threshold=args.threshold, min_runs=args.min_runs)
    if not chosen:
        print(f"{PROG}: no test calls for a quarantine ({len(scores)} scored)")
        return 0
    owner = args.owner or os.environ.get("GITHUB_ACTOR") or os.environ.get("USER")
    if not owner:
        raise UsageError(f"{PROG}: an entry needs an owner: pass --owner NAME")
    expires = date.today() + timedelta(days=args.days)
    entries = [_entry_for(score, owner, expires) for score in chosen]
    if args.write:
        added = _apply(lambda: add_entries(path, entries))
        print(f"{PROG}: added {len(added)} entr{'y' if len(added) == 1 else 'ies'} to {path}")
        return 0
    print(f"# {len(entries)} suggested entries for {path} (apply them with --write)")
    for entry, score in zip(entries, chosen, strict=True):
        print(f"\n# {score.failed_test} test-caused failure(s) in {score.runs} runs")
        print(entry_block(entry), end="")
    return 0


def _release(
    args: HistoryOptions,
    conn: Connection,
    path: Path,
    quarantine: QuarantineFile,
    window: Window,
) -> int:
    found = releases(conn, quarantine, passes=args.passes, runners=args.runners, window=window)
    if not found:
        print(f"{PROG}: no entry of {path} has passed {args.passes} runs in a row yet")
        return 0
    for release in found:
        print(
            f"release {release.entry.nodeid} ({quarantine.where(release.entry)}): passed "
            f"{release.passes} runs in a row on {', '.join(release.runners)}"
        )
    if args.write:
        removed = _apply(lambda: remove_entries(path, [r.entry.nodeid for r in found]))
        print(f"{PROG}: removed {len(removed)} entr{'y' if len(removed) == 1 else 'ies'}")
    else:
        print(f"# remove them from {path} with --write")
    return 0


def _entry_for(score: TestScore, owner: str, expires: date) -> QuarantineEntry:
    last = f", last in run {score.last_failure.run_id}" if score.last_failure else ""
    reason = (
        f"flaky: failed by itself in {score.failed_test} of {score.runs} runs "
        f"({score.flake_rate:.0%}{last}); suggested by simpler history"
    )
    return QuarantineEntry(nodeid=score.nodeid, reason=reason, expires=expires, owner=owner)


def _file_path(explicit: Path | None) -> Path:
    if explicit is not None:
        return explicit
    return Path(os.environ.get(QUARANTINE_ENV) or QUARANTINE_FILE_NAME)


def _load(path: Path) -> QuarantineFile:
    try:
        return load_quarantine(path)
    except QuarantineFileError as error:
        raise UsageError(f"{PROG}: {error}") from None


def _apply(edit: Callable[[], _T]) -> _T:
    try:
        return edit()
    except QuarantineFileError as error:
        raise UsageError(f"{PROG}: {error}") from None
