"""``simpler run --affected-since REV``: the suite, collected up front, cut to the tests a
change since REV can break (``simpler.impact.affected``), each kept with its reasons.

The decision is said before anything runs, and kept in the L2 phase's start record
(``affected``) for the summary and the history: the map it came from, the rule that failed
closed if one did, and every selected test's reasons. A run that selects nothing because
every changed file is non-code ends there, green and saying so.
"""

from __future__ import annotations

import atexit
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simpler.split.listing import SuiteListing
from simpler.usage import UsageError

if TYPE_CHECKING:
    from simpler.impact.affected import Affected

__all__ = ["AffectedRun", "decide_for", "select_affected"]

PROG = "simpler run"
MAX_MAP_AGE = 50  # commits before the merge-base a map may be from


@dataclass(frozen=True)
class AffectedRun:
    listing: SuiteListing  # what runs: the selected tests (shadow mode: all of them)
    headline: str
    every_test: list[str]  # the counts by reason, then each test with its reasons (pytest -v)
    record: dict[str, Any]  # the L2 phase start record's ``affected``
    only_tests: Path | None  # the selection's file; None in shadow mode or when it is empty

    @property
    def runs_nothing(self) -> bool:
        """Nothing selected (every change non-code): the run ends before it starts."""
        return not self.record["shadow"] and not self.record["selected"]


def decide_for(
    rev: str,
    listing: SuiteListing,
    history: str | None,
    platform: str,
    prog: str,
    max_age: int = MAX_MAP_AGE,
) -> Affected:
    """The decision on the suite as collected now; bad input (REV, the project's table) is
    a UsageError that names ``prog``."""
    from simpler.history.store import store_ref
    from simpler.impact.affected import decide
    from simpler.impact.rules import load_rules

    root = Path.cwd()
    try:
        rules = load_rules(root)
        return decide(root, rev, store_ref(history), listing.nodeids(), rules, max_age,
                      listing.unskippable, platform)  # fmt: skip
    except ValueError as error:  # a BadRevision, or the project's table
        raise UsageError(f"{prog}: {error}") from None


def select_affected(
    rev: str, listing: SuiteListing, history: str | None, platform: str, *, shadow: bool
) -> AffectedRun:
    """The run's share: the selected tests, or in ``shadow`` mode every test, the decision
    only told."""
    from simpler.impact.render import headline, text_lines

    affected = decide_for(rev, listing, history, platform, f"{PROG}: --affected-since")
    chosen = affected.decision.selected
    record = {
        "since": rev,
        "map_commit": affected.map_commit,
        "run_all": affected.decision.run_all,
        "non_code": affected.decision.non_code,
        "selected": len(chosen),
        "of": len(listing.nodeids()),
        "reasons": chosen,
        "shadow": shadow,
    }
    every_test = text_lines(affected, every_test=True)[1:]
    if shadow:
        return AffectedRun(listing, headline(affected), every_test, record, None)
    kept = SuiteListing(
        l2=[n for n in listing.l2 if n in chosen],
        plain={n for n in listing.plain if n in chosen},
        resource=[t for t in listing.resource if t.nodeid in chosen],
        unskippable=listing.unskippable & set(chosen),
    )
    listed = _listed(chosen) if chosen else None
    return AffectedRun(kept, headline(affected), every_test, record, listed)


def _listed(tests: dict[str, list[str]]) -> Path:
    """The file of node ids every L2 process keeps to; gone when simpler exits."""
    fd, name = tempfile.mkstemp(prefix="simpler-affected-", suffix=".txt")
    with os.fdopen(fd, "w", encoding="utf-8") as stream:
        stream.writelines(f"{nodeid}\n" for nodeid in tests)
    atexit.register(Path(name).unlink, missing_ok=True)
    return Path(name)
