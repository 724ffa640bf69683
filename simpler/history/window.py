"""Which runs a history reader looks at: the last DAYS, or the last N runs, of one branch.

One SQL common table expression, ``win``, that every reader's queries start from, so that
``--window``, ``--runs`` and ``--branch`` select the same runs everywhere. Runs are ordered
by start time, then run id; a run without a start time sorts oldest (docs/history.md, "The
window").
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from simpler.history.store.connection import Connection

__all__ = ["EVERY_RUN", "WINDOW_CTE", "Window", "WindowRun", "select_window", "window_runs"]

DAY_S = 86_400.0

# ``LIMIT -1`` is SQLite's "no limit": one statement serves every window.
WINDOW_CTE = """win AS (
    SELECT run_id FROM runs
    WHERE (:since IS NULL OR started >= :since) AND (:branch IS NULL OR branch = :branch)
    ORDER BY started DESC, run_id DESC
    LIMIT :limit
)"""


@dataclass(frozen=True)
class Window:
    """The runs that started at or after ``since`` (unix seconds), the last ``limit`` of them,
    of ``branch``; ``None`` leaves that bound out. Both bounds given: runs inside both."""

    since: float | None = None
    limit: int | None = None
    branch: str | None = None
    days: float | None = None  # what --window said, for the words a person reads

    def describe(self) -> str:
        """The window in words, as the page heads its tables."""
        parts = []
        if self.days is not None:
            parts.append(f"last {self.days:g} days")
        if self.limit is not None:
            parts.append(f"last {self.limit} runs")
        parts.append(f"branch {self.branch}" if self.branch else "all branches")
        return ", ".join(parts) if len(parts) > 1 or self.branch else "every run held, all branches"

    def params(self) -> dict[str, Any]:
        """The named parameters of :data:`WINDOW_CTE`."""
        return {
            "since": self.since,
            "branch": self.branch,
            "limit": -1 if self.limit is None else self.limit,
        }


EVERY_RUN = Window()  # no bound: every run the history holds, of every branch


@dataclass(frozen=True)
class WindowRun:
    run_id: str
    commit: str | None
    runner: str | None
    started: float | None


def select_window(
    *,
    window_days: float | None = None,
    last_runs: int | None = None,
    branch: str | None = None,
    now: float | None = None,
) -> Window:
    """The window of ``--window DAYS`` / ``--runs N`` / ``--branch B``, as of ``now``.

    Raises ValueError (one line) for a number of days or runs that is not positive: the
    CLI refuses those already; this guards other callers from an empty window by mistake.
    """
    since = None
    if window_days is not None:
        if not (math.isfinite(window_days) and window_days > 0):
            raise ValueError(f"a window of days must be a positive number, got {window_days!r}")
        since = (time.time() if now is None else now) - window_days * DAY_S
    if last_runs is not None and last_runs < 1:
        raise ValueError(f"a window of runs must be at least 1, got {last_runs!r}")
    return Window(since=since, limit=last_runs, branch=branch, days=window_days)


def window_runs(conn: Connection, window: Window) -> list[WindowRun]:
    """The runs of ``window``, oldest first."""
    rows = conn.execute(
        f'WITH {WINDOW_CTE} SELECT run_id, "commit", runner, started FROM runs '
        "WHERE run_id IN win ORDER BY started, run_id",
        window.params(),
    )
    return [WindowRun(*row) for row in rows]
