"""``simpler history copy SRC DST``: every run of one history into another, either store.

A team moving from the cached SQLite file to a server keeps its past, and a server's runs
can be taken home as a file. Each run is copied whole, in one transaction: the run's rows in
DST are replaced by SRC's (its attempts, verdicts and phases, and a shadow run's selection,
as SRC's importer left them), so a copy repeated changes nothing and a round trip gives back
the same rows. The suites the runs name are added where DST lacks them.
"""

from __future__ import annotations

from simpler.history.run_rows import delete_runs
from simpler.history.store.connection import Connection, transaction

__all__ = ["copy_history"]

# Every column of each table (schema.py), named: the stores agree on names, not on order.
_RUN_TABLES = {
    "runs": (
        "run_id", "commit", "branch", "runner", "platform", "started", "ended", "complete",
        "exit_code", "imported", "suite",
    ),
    "attempts": (
        "run_id", "nodeid", "attempt", "phase", "outcome", "duration_s", "device", "runtime",
        "rc", "where", "cause", "own_cause", "quarantined", "message", "label", "ts",
    ),
    "verdicts": ("run_id", "nodeid", "outcome", "attempts", "cause", "quarantined"),
    "run_phases": (
        "run_id", "phase", "source", "starts", "ends", "returncode", "duration_s",
    ),
    "affected_runs": ("run_id", "since", "map_commit", "run_all", "selected", "tests"),
    "affected_selected": ("run_id", "nodeid"),
}  # fmt: skip
_SUITE_OF = _RUN_TABLES["runs"].index("suite")


def _select(table: str) -> str:
    names = ", ".join(f'"{column}"' for column in _RUN_TABLES[table])
    return f"SELECT {names} FROM {table} WHERE run_id = ?"


def copy_history(source: Connection, target: Connection) -> int:
    """Copy every run of ``source`` into ``target``; how many runs were copied."""
    run_ids = [row[0] for row in source.execute("SELECT run_id FROM runs ORDER BY run_id")]
    copied_suites: set[str] = set()
    for run_id in run_ids:
        rows = {
            table: source.execute(_select(table), (run_id,)).fetchall() for table in _RUN_TABLES
        }
        suite = rows["runs"][0][_SUITE_OF]
        tests = []
        if suite is not None and suite not in copied_suites:
            tests = source.execute(
                "SELECT suite, nodeid FROM suite_tests WHERE suite = ?", (suite,)
            ).fetchall()
            copied_suites.add(suite)
        _store(target, run_id, rows, tests)
    return len(run_ids)


def _store(
    target: Connection,
    run_id: str,
    rows: dict[str, list[tuple[object, ...]]],
    tests: list[tuple[object, ...]],
) -> None:
    with transaction(target):
        target.lock_run(run_id)  # an import of the run into DST waits for the copy, or it for it
        delete_runs(target, "?", (run_id,))  # DST's run becomes SRC's
        for table, columns in _RUN_TABLES.items():
            if rows[table]:
                target.insert_rows(table, columns, rows[table])
        if tests:
            target.executemany(
                "INSERT INTO suite_tests (suite, nodeid) VALUES (?, ?) ON CONFLICT DO NOTHING",
                sorted(tests),
            )
