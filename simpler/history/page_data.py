"""``simpler history html OUT``: gather what the page shows from the database and write it.

The page itself (markup, style, the one inline script) is :mod:`simpler.history.page`;
this module only reads: the scores of the window, a strip for each test worth looking at,
the failed attempts counted by cause, and what the selection missed in shadow runs. It
writes the file atomically (a temporary file renamed over OUT), so a CI step that publishes
the page never uploads half of one.
"""

from __future__ import annotations

import time
from pathlib import Path

from simpler.base.atomic_write import write_atomically
from simpler.history.model import StripMark, TestScore
from simpler.history.page import render_page
from simpler.history.scores import compute_scores
from simpler.history.shadow_misses import shadow_misses
from simpler.history.show import test_strip
from simpler.history.store.connection import Connection
from simpler.history.window import EVERY_RUN, WINDOW_CTE, Window

__all__ = ["attribution_counts", "write_page"]

# A history of thousands of green tests would make a page of thousands of dots that says
# nothing; every test with an unusual run gets its strip, green ones up to this many.
MAX_PLAIN_STRIPS = 200

_ATTRIBUTION_SQL = f"""WITH {WINDOW_CTE}
SELECT cause, count(*) FROM attempts
WHERE run_id IN win AND cause IS NOT NULL
GROUP BY cause"""


def attribution_counts(
    conn: Connection,
    *,
    window: Window = EVERY_RUN,
) -> dict[str, int]:
    """The window's failed attempts counted by cause (test, device, infra)."""
    return {cause: count for cause, count in conn.execute(_ATTRIBUTION_SQL, window.params())}


def write_page(
    conn: Connection,
    out: Path,
    *,
    source: str,
    window: Window = EVERY_RUN,
    now: float | None = None,
) -> int:
    """Write the page for the window to ``out``; return how many tests it lists."""
    scores = compute_scores(conn, window=window)
    strips: dict[str, list[StripMark]] = {}
    plain = 0
    for score in scores:
        if not _unusual(score):
            if plain >= MAX_PLAIN_STRIPS:
                continue
            plain += 1
        strips[score.nodeid] = test_strip(conn, score.nodeid, window=window)
    html = render_page(
        scores,
        strips,
        attribution_counts(conn, window=window),
        title=f"simpler history: {source}",
        generated=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(now)),
        window=window.describe(),
        shadow=shadow_misses(conn, window=window),
    )
    write_atomically(out, lambda stream: stream.write(html.encode("utf-8")))
    return len(scores)


def _unusual(score: TestScore) -> bool:
    return bool(score.failed_test or score.failed_device or score.failed_infra)
