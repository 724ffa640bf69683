"""What the scores need beyond counts, for the tests that failed by their own fault only.

Flips, same-commit flips, the last failure and where the failures fell, from the test's
unusual runs (``simpler.history.unusual_runs``, already read) and a look-up of its own rows
only where needed (docs/history.md, "Why it stays fast"): a run that is not unusual is a
plain pass.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from simpler.contract import PASSING_OUTCOMES, phase_rank
from simpler.history.flake_stats import (
    MIN_CONCENTRATED_FAILURES,
    concentrated_place,
    flip_count,
)
from simpler.history.model import LastFailure
from simpler.history.store.connection import Connection
from simpler.history.unusual_runs import UnusualRun, UnusualRuns
from simpler.history.window import WindowRun

__all__ = ["Evidence", "card_of", "gather_evidence"]

_PASSING = tuple(sorted(PASSING_OUTCOMES))
# Where a test ran: its attempts that passed or failed by its own fault. Reached run by run
# through the primary keys (run, node id), so that no index by node id is needed: the CROSS
# JOIN keeps SQLite from scanning every attempt for the node id instead.
_PLACES_SQL = (
    "SELECT a.run_id, a.device FROM runs AS r CROSS JOIN attempts AS a "
    "ON a.run_id = r.run_id AND a.nodeid = ? WHERE TRUE "
    f"AND (a.cause = 'test' OR a.outcome IN ({', '.join('?' * len(_PASSING))}))"
)


@dataclass(frozen=True)
class Evidence:
    """The part of one test's score that its failures' positions decide."""

    flips: int
    same_commit_flips: int
    last_failure: LastFailure | None
    devices: tuple[str, ...]
    device_sensitive: bool


def card_of(runner: str | None, device: int | None) -> str | None:
    """A card's name: its runner label and device id (a device id alone names a card only
    on one machine). ``None`` when the device is unknown."""
    if device is None:
        return None
    return f"{runner or '?'}/dev{device}"


class _Window:
    """The window's runs and what every test's evidence looks up in them."""

    def __init__(self, runs: Sequence[WindowRun]) -> None:
        self.runs = runs
        self.position = {run.run_id: index for index, run in enumerate(runs)}
        self.by_commit: dict[str, list[int]] = defaultdict(list)
        for index, run in enumerate(runs):
            if run.commit is not None:
                self.by_commit[run.commit].append(index)
        self.every_run = range(len(runs))
        self.runners = Counter(run.runner for run in runs)


def gather_evidence(
    conn: Connection,
    runs: Sequence[WindowRun],
    presence: Mapping[str, int],
    unusual: Mapping[str, UnusualRuns],
) -> dict[str, Evidence]:
    """The evidence of each test of ``presence`` (node id -> its runs in the window) that
    failed by its own fault; ``runs`` are the window's, oldest first."""
    window = _Window(runs)
    evidence = {}
    for nodeid, present_runs in presence.items():
        test = unusual.get(nodeid)
        own = test.own_failures if test is not None else {}
        if test is None or not own:
            continue  # never failed by its own fault: nothing to look at
        failed = set(own)
        # A test with a verdict in every run of the window needs no look-up of its runs.
        if present_runs == len(runs):
            present: Sequence[int] = window.every_run
            runners = window.runners
        else:
            present = _present(conn, nodeid, window.position)
            runners = Counter(runs[index].runner for index in present)
        cards = [card_of(runs[i].runner, a.device) for i, run in own.items() for a in run.own]
        evidence[nodeid] = Evidence(
            flips=_flips(failed, present),
            same_commit_flips=_same_commit_flips(test, failed, window, present),
            last_failure=_last_failure(own, runs),
            devices=tuple(sorted({card for card in cards if card is not None})),
            device_sensitive=_device_sensitive(conn, nodeid, failed, cards, window, runners),
        )
    return evidence


def _present(conn: Connection, nodeid: str, position: Mapping[str, int]) -> list[int]:
    """The window positions of the runs in which ``nodeid`` has a verdict, oldest first."""
    rows = conn.execute(
        "SELECT v.run_id FROM runs AS r CROSS JOIN verdicts AS v "
        "ON v.run_id = r.run_id AND v.nodeid = ?",
        (nodeid,),
    )
    return sorted(position[run_id] for (run_id,) in rows if run_id in position)


def _flips(failed: set[int], present: Sequence[int]) -> int:
    if isinstance(present, range):  # every run: a run's position is its rank
        return flip_count(failed, len(present))
    rank = {index: order for order, index in enumerate(present)}
    return flip_count([rank[index] for index in failed if index in rank], len(present))


def _same_commit_flips(
    test: UnusualRuns, failed: set[int], window: _Window, present: Sequence[int]
) -> int:
    """Commits the test failed on by its own fault and also passed on without one."""
    commits = {c for index in failed if (c := window.runs[index].commit) is not None}
    ran = present if isinstance(present, range) else set(present)
    flips = 0
    for commit in commits:
        others = [i for i in window.by_commit[commit] if i not in failed and i in ran]
        # A run of the test that is not unusual is a plain pass.
        if any(i not in test.runs or test.runs[i].passed for i in others):
            flips += 1
    return flips


def _last_failure(own: Mapping[int, UnusualRun], runs: Sequence[WindowRun]) -> LastFailure:
    """The latest run's last attempt of its own, by phase and attempt number."""
    index = max(own)
    last = max(own[index].own, key=lambda a: (phase_rank(a.phase), a.attempt))
    return LastFailure(runs[index].run_id, runs[index].commit, last.message)


def _device_sensitive(
    conn: Connection,
    nodeid: str,
    failed: set[int],
    cards: list[str | None],
    window: _Window,
    runners: Mapping[str | None, int],
) -> bool:
    """All its own failures on one runner label, or on one card (``flake_stats``)."""
    if len(failed) < MIN_CONCENTRATED_FAILURES:
        return False
    runner_places = [window.runs[index].runner for index in failed]
    if concentrated_place(runner_places, len(failed), runners) is not None:
        return True
    if len(set(cards)) != 1 or cards[0] is None:
        return False  # not all on one known card: no need to ask where it passed
    # Runs per card, each card of a run once: a retry on the card it failed on is no
    # second run there.
    used = {
        (run_id, card_of(window.runs[window.position[run_id]].runner, device))
        for run_id, device in conn.execute(_PLACES_SQL, (nodeid, *_PASSING))
        if run_id in window.position
    }
    return concentrated_place(cards, len(failed), Counter(card for _, card in used)) is not None
