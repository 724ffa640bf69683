"""``simpler history show NODEID``: one test's runs as a strip of marks, oldest to newest,
and the commits where it flipped.

The marks (``.`` ``R`` ``F`` ``Q`` ``D`` ``I`` ``s``), which outranks which in one run, and
what a flip is: docs/history.md ("Reading it", "The strip"). ``D``, ``I`` and ``s`` runs say
nothing about the test: a device fault between two passes is no flip.
"""

from __future__ import annotations

from collections.abc import Sequence

from simpler.contract import GREEN_OUTCOMES
from simpler.history.model import StripMark
from simpler.history.store.connection import Connection
from simpler.history.window import EVERY_RUN, WINDOW_CTE, Window

__all__ = ["LEGEND", "mark_of", "render_show", "test_strip"]

LEGEND = {
    ".": "passed",
    "R": "passed after a failed attempt",
    "F": "failed",
    "Q": "failed while quarantined",
    "D": "device fault",
    "I": "infrastructure",
    "s": "skipped",
}
_PASSES, _FAILURES = frozenset(".R"), frozenset("FQ")
_COMMIT_SHOWN = 12

# Written for both stores: PostgreSQL has no max() of a comparison and groups only by what
# is named.
_STRIP_SQL = f"""WITH {WINDOW_CTE}
SELECT r.run_id, r."commit", r.started, v.outcome, v.quarantined,
       count(a.nodeid) AS failed_attempts,
       coalesce(max(CASE WHEN a.cause = 'test' THEN 1 ELSE 0 END), 0) AS by_test,
       coalesce(max(CASE WHEN a.cause = 'device' THEN 1 ELSE 0 END), 0) AS by_device,
       coalesce(max(CASE WHEN a.cause = 'test' AND a.quarantined <> 0 THEN 1 ELSE 0 END), 0)
           AS quarantined_failure
FROM runs AS r
CROSS JOIN verdicts AS v ON v.run_id = r.run_id AND v.nodeid = :nodeid
LEFT JOIN attempts AS a
    ON a.run_id = v.run_id AND a.nodeid = v.nodeid AND a.cause IS NOT NULL
WHERE r.run_id IN win
GROUP BY r.run_id, r."commit", r.started, v.outcome, v.quarantined
ORDER BY r.started, r.run_id"""


def test_strip(
    conn: Connection,
    nodeid: str,
    *,
    window: Window = EVERY_RUN,
) -> list[StripMark]:
    """``nodeid``'s runs in the window, oldest first, one mark each (the module's docstring)."""
    rows = conn.execute(_STRIP_SQL, {**window.params(), "nodeid": nodeid})
    return [_mark(*row) for row in rows]


def _mark(
    run_id: str,
    commit: str | None,
    started: float | None,
    outcome: str,
    quarantined: int,
    failed_attempts: int,
    by_test: int,
    by_device: int,
    quarantined_failure: int,
) -> StripMark:
    """One row of _STRIP_SQL as its mark."""
    mark = mark_of(
        outcome,
        failed_attempts=failed_attempts,
        by_test=bool(by_test),
        by_device=bool(by_device),
        quarantined=bool(quarantined or quarantined_failure),
    )
    return StripMark(run_id=run_id, commit=commit, mark=mark, started=started)


test_strip.__test__ = False  # type: ignore[attr-defined]  # a function, not a pytest test


def mark_of(
    outcome: str, *, failed_attempts: int, by_test: bool, by_device: bool, quarantined: bool
) -> str:
    """One run's mark from its verdict and its failed attempts' causes."""
    if outcome in GREEN_OUTCOMES:
        if not failed_attempts:
            return "s" if outcome == "skipped" else "."
        # Green in the end: the mark still names whose failure the run had, so a victim
        # recovered by the fresh-process retry reads as the device's, never as flaky.
        if by_test:
            return "R"
        return "D" if by_device else "I"
    if by_test:
        return "Q" if quarantined else "F"
    if by_device:
        return "D"
    if failed_attempts:
        return "I"
    # A verdict that is not green with no attributed attempt: the attribution rule, "otherwise
    # test". It does not happen with the importer's rows; a strip must still say "failed".
    return "Q" if quarantined else "F"


def render_show(nodeid: str, marks: Sequence[StripMark]) -> str:
    """The strip on one line, the legend of its marks, then each flip with its runs."""
    if not marks:
        return f"no runs of {nodeid} in the history\n"
    plural = "run" if len(marks) == 1 else "runs"
    strip = "".join(mark.mark for mark in marks)
    legend = "  ".join(f"{mark} {meaning}" for mark, meaning in LEGEND.items() if mark in strip)
    lines = [f"{nodeid}: {len(marks)} {plural}, oldest first", strip, legend]
    flips = _flips(marks)
    if not flips:
        lines.append("flips: none")
    else:
        lines.append(f"flips ({len(flips)}):")
        for before, after in flips:
            change = "pass -> fail" if after.mark in _FAILURES else "fail -> pass"
            lines.append(f"  {change}: {_where(before)} -> {_where(after)}")
    return "\n".join(lines) + "\n"


def _flips(marks: Sequence[StripMark]) -> list[tuple[StripMark, StripMark]]:
    flips = []
    previous: StripMark | None = None
    for mark in marks:
        if mark.mark not in _PASSES and mark.mark not in _FAILURES:
            continue
        if previous is not None and (previous.mark in _FAILURES) != (mark.mark in _FAILURES):
            flips.append((previous, mark))
        previous = mark
    return flips


def _where(mark: StripMark) -> str:
    commit = mark.commit[:_COMMIT_SHOWN] if mark.commit else "unknown commit"
    return f"run {mark.run_id} ({commit})"
