"""What the summary says of ``simpler run --affected-since``: the decision the L2 phase's start
record keeps (``affected``), and in shadow mode (``--affected-shadow``: everything ran) the
failures the selection would have missed."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from simpler.reporting.records import PhaseRecord, Record

__all__ = ["AffectedDecision", "decision_of"]


@dataclass(frozen=True)
class AffectedDecision:
    since: str
    map_commit: str | None
    run_all: str | None
    selected: frozenset[str]
    of: int
    shadow: bool

    def lines(self, failed: Iterable[str]) -> list[str]:
        """The summary's lines: the decision, and in shadow mode what it would have missed
        of the run's ``failed`` tests."""
        count = f"{len(self.selected)} of {self.of} tests selected"
        since = f"affected since {self.since}"
        if self.run_all:
            lines = [f"{since}: {count}: everything runs ({self.run_all})"]
        else:
            lines = [f"{since} (map of {str(self.map_commit)[:7]}): {count}"]
        if self.shadow:
            failures = sorted(set(failed))
            missed = [nodeid for nodeid in failures if nodeid not in self.selected]
            lines[0] += " (shadow: everything ran)"
            lines.append(
                f"affected shadow: the selection would have missed {len(missed)} of "
                f"{len(failures)} failure(s)" + (":" if missed else "")
            )
            lines += [f"  {nodeid}" for nodeid in missed]
        return lines


def decision_of(records: Iterable[Record]) -> AffectedDecision | None:
    """The decision the last phase start record among ``records`` keeps, if one does."""
    starts = [r for r in records if isinstance(r, PhaseRecord) and not r.is_end]
    decided = next((r.affected for r in reversed(starts) if r.affected), None)
    if decided is None:
        return None
    reasons, commit, run_all, of = (
        decided.get("reasons"),
        decided.get("map_commit"),
        decided.get("run_all"),
        decided.get("of"),
    )
    return AffectedDecision(
        since=str(decided.get("since")),
        map_commit=commit if isinstance(commit, str) else None,
        run_all=run_all if isinstance(run_all, str) and run_all else None,
        selected=frozenset(reasons) if isinstance(reasons, dict) else frozenset(),
        # A count that is not one (a hand-edited or foreign report) reads as none: the summary
        # and the history's import read every report, and neither may stop at one field.
        of=of if type(of) is int else 0,
        shadow=decided.get("shadow") is True,
    )
