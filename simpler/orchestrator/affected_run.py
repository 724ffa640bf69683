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
from typing import Any

from simpler.share.listing import SuiteListing
from simpler.usage import UsageError

__all__ = ["AffectedRun", "select_affected"]

PROG = "simpler run"
MAX_MAP_AGE = 50  # commits before the merge-base a map may be from


@dataclass(frozen=True)
class AffectedRun:
    listing: SuiteListing  # the selected tests only
    headline: str
    record: dict[str, Any]  # the L2 phase start record's ``affected``
    only_tests: Path | None  # None: nothing selected, nothing to run

    @property
    def empty(self) -> bool:
        return self.only_tests is None


def select_affected(
    rev: str, listing: SuiteListing, history: str | None, platform: str
) -> AffectedRun:
    from simpler.history.store import store_ref
    from simpler.impact.affected import BadRevision, decide
    from simpler.impact.render import headline
    from simpler.impact.rules import load_rules

    root = Path.cwd()
    try:
        rules = load_rules(root)
        tests = [*listing.l2, *(t.nodeid for t in listing.resource)]
        affected = decide(
            root, rev, store_ref(history), tests, rules, MAX_MAP_AGE, listing.unskippable,
            platform,
        )  # fmt: skip
    except (BadRevision, ValueError) as error:
        raise UsageError(f"{PROG}: --affected-since: {error}") from None
    chosen = affected.decision.selected
    kept = SuiteListing(
        l2=[n for n in listing.l2 if n in chosen],
        plain={n for n in listing.plain if n in chosen},
        resource=[t for t in listing.resource if t.nodeid in chosen],
        unskippable=listing.unskippable & set(chosen),
    )
    record = {
        "since": rev,
        "map_commit": affected.map_commit,
        "run_all": affected.decision.run_all,
        "non_code": affected.decision.non_code,
        "selected": len(chosen),
        "of": len(tests),
        "reasons": chosen,
    }
    return AffectedRun(kept, headline(affected), record, _listed(chosen) if chosen else None)


def _listed(tests: dict[str, list[str]]) -> Path:
    """The file of node ids every L2 process keeps to; gone when simpler exits."""
    fd, name = tempfile.mkstemp(prefix="simpler-affected-", suffix=".txt")
    with os.fdopen(fd, "w", encoding="utf-8") as stream:
        stream.writelines(f"{nodeid}\n" for nodeid in tests)
    atexit.register(Path(name).unlink, missing_ok=True)
    return Path(name)
