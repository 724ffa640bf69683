"""Which tests each run had, stored once per distinct suite instead of indexed per run.

A run names its suite (a hash of its sorted node ids); a suite's tests are stored the first
time it is seen, and a test's runs are the window's runs per suite (docs/history.md, "Why it
stays fast"). A run stored in shards names a new suite as more tests arrive; a suite no run
names stays until ``simpler history prune`` (deleting it at once could race an import).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import NamedTuple

from simpler.history.store.connection import Connection

__all__ = ["PRESENCE_CTE", "Suite", "drop_unused_suites", "record_suite", "suite_of"]

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


class Suite(NamedTuple):
    """A run's tests, sorted, and the suite's name: the hash of them."""

    name: str
    tests: list[str]


def suite_of(nodeids: Iterable[str]) -> Suite:
    """The suite of these tests (a reader names a new run's, off the writer's path)."""
    tests = sorted(set(nodeids))
    joined = "\0".join(tests).encode("utf-8", "surrogatepass")
    return Suite(hashlib.blake2b(joined, digest_size=16).hexdigest(), tests)


def record_suite(conn: Connection, run_id: str, suite: Suite) -> str:
    """Name the run's suite (storing it if new); its name."""
    known = conn.execute("SELECT 1 FROM suite_tests WHERE suite = ? LIMIT 1", (suite.name,))
    if known.fetchone() is None:
        # On a server another import may be adding the same suite, unseen until it commits:
        # its rows are then skipped, not refused, and added in node id order by both, so the
        # second waits for the first at the first row instead of the two locking in a circle.
        conn.executemany(
            "INSERT INTO suite_tests (suite, nodeid) VALUES (?, ?) ON CONFLICT DO NOTHING",
            ((suite.name, nodeid) for nodeid in suite.tests),
        )
    conn.execute("UPDATE runs SET suite = ? WHERE run_id = ?", (suite.name, run_id))
    return suite.name


def drop_unused_suites(conn: Connection) -> None:
    """Forget the suites no run names any more (after a prune)."""
    conn.execute(
        "DELETE FROM suite_tests WHERE suite NOT IN "
        "(SELECT suite FROM runs WHERE suite IS NOT NULL)"
    )
