"""``simpler affected REV`` and ``simpler run --affected-since REV``: the decision, from git,
the history's map and the suite as collected now, with the map it used and why.

Everything that keeps the map from answering fails closed here, in one place, with its rule
named: git cannot find where HEAD met REV (a shallow clone says ``fetch-depth: 0``), no map
at an ancestor within ``max_age`` commits, only maps of another environment, or a change the
map cannot see (``simpler.impact.select``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from simpler.history.store import is_server, open_store
from simpler.impact.git_change import GitUnanswered, ancestors, change_since, merge_base
from simpler.impact.measured import measured_seconds
from simpler.impact.recent import recent_trouble
from simpler.impact.select import Decision, Rules, everything, select_tests
from simpler.impact.store import Environment, find_map, load_map, why_no_map
from simpler.impact.test_imports import SuiteImports

__all__ = ["Affected", "BadRevision", "decide"]

NOT_INPUT = ("is not a commit here", "not a git checkout")
MEASURED_RUNS = 20  # the runs whose durations say what a test takes


class BadRevision(ValueError):
    """REV names no commit, or there is no checkout: the user's input (exit 2)."""


@dataclass(frozen=True)
class Affected:
    rev: str
    decision: Decision
    map_commit: str | None = None
    commits_back: int | None = None  # from the merge-base to the map's commit
    # Each test's measured seconds (the history's last runs): the selection's share of them.
    seconds: Mapping[str, float] = field(default_factory=dict)

    def time_share(self) -> float | None:
        """The selected tests' share of the measured time of the suite's measured tests;
        None when the history measured none of them."""
        selected = self.decision.selected
        known = [n for n in (*selected, *self.decision.left_out) if n in self.seconds]
        total = sum(self.seconds[n] for n in known)
        if total <= 0:
            return None
        return sum(self.seconds[n] for n in known if n in selected) / total


def decide(
    root: Path,
    rev: str,
    history: str,
    tests: Sequence[str],
    rules: Rules,
    max_age: int,
    unskippable: Collection[str] = (),
    platform: str | None = None,
) -> Affected:
    """Which of ``tests`` a change since ``rev`` can break; the ``unskippable`` ones, and
    those the history saw fail or flake in its last ``rules.recent_runs`` runs, always."""
    try:
        base = merge_base(root, rev)
        commits = ancestors(root, base, max_age)
    except GitUnanswered as why:
        if any(marker in str(why) for marker in NOT_INPUT):
            raise BadRevision(str(why)) from None
        return Affected(rev, everything(tests, str(why)))
    if not is_server(history) and not Path(history).is_file():
        return Affected(rev, everything(tests, f"no history at {history}: no impact map"))
    environment = Environment.here()
    conn = open_store(history, create=False)
    try:
        map_commit = find_map(conn, commits, environment)
        if map_commit is None:
            return Affected(rev, everything(tests, why_no_map(conn, commits, environment)))
        change = change_since(root, map_commit)
        found = load_map(conn, map_commit, environment, files=change.files)
        standing = recent_trouble(conn, rules.recent_runs) if rules.recent_runs else {}
        seconds = measured_seconds(conn, MEASURED_RUNS)
    finally:
        conn.close()
    assert found is not None  # find_map found it, in this connection
    for nodeid in unskippable:
        standing.setdefault(nodeid, []).append("unskippable")
    suite_files = {nodeid.split("::", 1)[0] for nodeid in tests}
    imports = SuiteImports(root, suite_files | {p for p in change.files if p.endswith(".py")})
    decision = select_tests(found, change.files, tests, rules, standing, platform, imports)
    return Affected(rev, decision, map_commit, commits.index(map_commit), seconds)
