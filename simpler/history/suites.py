"""Which tests each run had, stored once per distinct suite instead of indexed per run.

The scores need, per test, the number of runs of the window it ran in. Counting that from
the verdicts needs them in node id order: an index by node id, which every import would
update at one random place per test (a run of 5,000 tests rewrites thousands of pages of
it). Runs of one project mostly collect the same tests, so each run names its suite (a
hash of its sorted node ids) and a suite's tests are stored the first time it is seen:
the count is then the window's runs per suite, spread over that suite's tests.

A run stored in shards names the suite of the tests stored so far, and a new one as more
arrive; a suite no run names any longer is counted by no window and stays until ``simpler
history prune`` drops it (deleting it at once could race an import adding it on a server).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from simpler.history.store.connection import Connection

__all__ = ["PRESENCE_CTE", "drop_unused_suites", "record_suite"]

# The runs of each test in the window (``win``, simpler.history.window): the columns
# ``nodeid`` and ``runs``, one row per test.
PRESENCE_CTE = """per_suite AS (
    SELECT suite, count(*) AS runs FROM runs
    WHERE run_id IN win AND suite IS NOT NULL
    GROUP BY suite
),
presence AS (
    SELECT t.nodeid, sum(p.runs) AS runs
    FROM per_suite AS p JOIN suite_tests AS t ON t.suite = p.suite
    GROUP BY t.nodeid
)"""


def record_suite(conn: Connection, run_id: str, nodeids: Sequence[str]) -> str:
    """Name the run's suite, the tests of its verdicts (storing it if new); its name."""
    tests = sorted(set(nodeids))
    joined = "\0".join(tests).encode("utf-8", "surrogatepass")
    suite = hashlib.blake2b(joined, digest_size=16).hexdigest()
    known = conn.execute("SELECT 1 FROM suite_tests WHERE suite = ? LIMIT 1", (suite,))
    if known.fetchone() is None:
        # On a server another import may be adding the same suite, unseen until it commits:
        # its rows are then skipped, not refused, and added in node id order by both, so the
        # second waits for the first at the first row instead of the two locking in a circle.
        conn.executemany(
            "INSERT INTO suite_tests (suite, nodeid) VALUES (?, ?) ON CONFLICT DO NOTHING",
            ((suite, nodeid) for nodeid in tests),
        )
    conn.execute("UPDATE runs SET suite = ? WHERE run_id = ?", (suite, run_id))
    return suite


def drop_unused_suites(conn: Connection) -> None:
    """Forget the suites no run names any more (after a prune)."""
    conn.execute(
        "DELETE FROM suite_tests WHERE suite NOT IN "
        "(SELECT suite FROM runs WHERE suite IS NOT NULL)"
    )
