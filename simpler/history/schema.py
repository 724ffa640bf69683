"""The history database: its tables, its version, and how it is opened.

One SQLite file (stdlib ``sqlite3``) in WAL mode with a busy timeout, so that readers run
beside an import and a second import waits for the first. The schema version is ``PRAGMA
user_version``: an older file gains the newer tables when opened, a newer one is refused.
The tables: docs/design.md, "The history store"; what each is for: docs/history.md.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from simpler.usage import InfraError

__all__ = [
    "BUSY_TIMEOUT_S",
    "DDL",
    "DEFAULT_DB",
    "SCHEMA_VERSION",
    "HistoryUnusable",
    "SqliteConnection",
    "connect",
]

SCHEMA_VERSION = 4
DEFAULT_DB = Path(".simpler") / "history.db"
# Two CI jobs importing at once: the later waits for the earlier's one transaction per run.
BUSY_TIMEOUT_S = 60.0

# ``commit`` and ``where`` are SQL keywords: quoted wherever they are named.
DDL = """
CREATE TABLE IF NOT EXISTS runs (
    run_id      TEXT PRIMARY KEY,
    "commit"    TEXT,
    branch      TEXT,
    runner      TEXT,
    platform    TEXT,
    started     REAL,           -- unix seconds of the run's first record
    ended       REAL,           -- unix seconds of its last record
    complete    INTEGER NOT NULL DEFAULT 0,  -- every phase that started also ended
    exit_code   INTEGER,        -- the report phase's, else the worst phase's
    imported    REAL,           -- when this row was last written
    suite       TEXT            -- the tests it had: suite_tests (simpler.history.suites)
);
CREATE TABLE IF NOT EXISTS attempts (
    run_id      TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    nodeid      TEXT NOT NULL,
    attempt     INTEGER NOT NULL,
    phase       TEXT NOT NULL,
    outcome     TEXT NOT NULL,  -- the report's outcome
    duration_s  REAL,
    device      INTEGER,
    runtime     TEXT,
    rc          INTEGER,
    "where"     TEXT,
    cause       TEXT,           -- test, device or infra, NULL when the attempt did not fail
    own_cause   TEXT,           -- the cause had the run been complete (cause is infra if not)
    quarantined INTEGER NOT NULL DEFAULT 0,
    message     TEXT,
    label       TEXT,           -- a Resource child's label, the key of its durations
    ts          REAL,           -- the record's time: within a phase, the later record wins
    PRIMARY KEY (run_id, nodeid, phase, attempt)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS verdicts (
    run_id      TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    nodeid      TEXT NOT NULL,
    outcome     TEXT NOT NULL,  -- the final outcome: the latest phase's last attempt
    attempts    INTEGER NOT NULL,  -- how many attempts the test had in the run
    cause       TEXT,           -- the cause of the final outcome when it failed
    quarantined INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, nodeid)
) WITHOUT ROWID;
-- Each phase of a run per source (one report file's share of it, named by the key of its
-- first record of the run): shards imported one at a time add up, and a file imported
-- again, grown, only raises its own counts. A run is complete when every phase that
-- started in a source also ended there.
CREATE TABLE IF NOT EXISTS run_phases (
    run_id      TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    phase       TEXT NOT NULL,
    source      TEXT NOT NULL,
    starts      INTEGER NOT NULL DEFAULT 0,
    ends        INTEGER NOT NULL DEFAULT 0,
    returncode  INTEGER,        -- the worst of its end records'
    duration_s  REAL,           -- its end records' durations, summed
    PRIMARY KEY (run_id, phase, source)
) WITHOUT ROWID;
-- The node ids of each distinct suite runs had, stored once: the runs a test had in a
-- window without an index of the verdicts by node id, which every import would rewrite.
CREATE TABLE IF NOT EXISTS suite_tests (
    suite       TEXT NOT NULL,
    nodeid      TEXT NOT NULL,
    PRIMARY KEY (suite, nodeid)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS runs_by_start ON runs (started);
-- The impact map (simpler.impact): per commit and environment, the code blocks each test ran.
-- Jobs and shards of one commit add rows to one map: the union. A test known to the map
-- with no block of the project's is one row of empty file and name.
CREATE TABLE IF NOT EXISTS impact_maps (
    map_id      TEXT PRIMARY KEY,   -- "<commit> <environment>"
    "commit"    TEXT NOT NULL,
    environment TEXT NOT NULL,      -- a digest of the Python, the platform and the packages
    python      TEXT,
    platform    TEXT,
    measured    REAL                -- unix seconds of the last run added to it
);
CREATE TABLE IF NOT EXISTS impact_blocks (
    map_id      TEXT NOT NULL,
    file        TEXT NOT NULL,      -- from the checkout's root, with /
    qualname    TEXT NOT NULL,      -- <module>, or as Python names it (Foo.bar)
    checksum    TEXT NOT NULL,
    PRIMARY KEY (map_id, file, qualname)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS impact_tests (
    map_id      TEXT NOT NULL,
    nodeid      TEXT NOT NULL,
    file        TEXT NOT NULL,
    qualname    TEXT NOT NULL,
    PRIMARY KEY (map_id, nodeid, file, qualname)
) WITHOUT ROWID;
-- The selection's decision in a shadow run (--affected-since REV --affected-shadow: every
-- test ran), kept so that the run's verdicts tell which failures it would have missed. A run
-- that was no shadow run has no row here.
CREATE TABLE IF NOT EXISTS affected_runs (
    run_id      TEXT PRIMARY KEY REFERENCES runs(run_id) ON DELETE CASCADE,
    since       TEXT,               -- the revision the change was measured from
    map_commit  TEXT,               -- the commit of the map it decided from, NULL if none
    run_all     TEXT,               -- the rule that selected every test, NULL if none did
    selected    INTEGER NOT NULL,   -- how many tests it selected
    tests       INTEGER NOT NULL    -- of how many the suite had
);
CREATE TABLE IF NOT EXISTS affected_selected (
    run_id      TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    nodeid      TEXT NOT NULL,      -- a test the selection would have run
    PRIMARY KEY (run_id, nodeid)
) WITHOUT ROWID;
"""


_INSERT_PASSED_ONCE = """
INSERT INTO verdicts (run_id, nodeid, outcome, attempts)
SELECT ?, nodeid, 'passed', 1 FROM attempts WHERE run_id = ?
GROUP BY nodeid HAVING count(*) = 1 AND min(outcome) = 'passed' AND max(quarantined) = 0
"""


class HistoryUnusable(InfraError):
    """The file is not a history database simpler can use: one line, exit 3."""


class SqliteConnection(sqlite3.Connection):
    """The stdlib connection with the writes a history store provides (store/connection.py)."""

    def lock_run(self, run_id: str, /) -> None:
        """Nothing to take: the transaction's ``BEGIN IMMEDIATE`` holds the file's one write
        lock, so no other import of any run writes until it ends."""

    def insert_rows(
        self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], /
    ) -> int:
        names = ", ".join(f'"{column}"' for column in columns)
        marks = ", ".join("?" * len(columns))
        sql = f"INSERT INTO {table} ({names}) VALUES ({marks})"
        return max(self.executemany(sql, rows).rowcount, 0)

    def insert_passed_once(self, run_id: str, nodeids: Sequence[str], /) -> None:
        """Derived here from the attempts just stored, not bound row by row: the same rows
        (one attempt, passed, not quarantined), and a fifth less of the import's writing."""
        self.execute(_INSERT_PASSED_ONCE, (run_id, run_id))


def connect(path: Path, *, create: bool = True) -> SqliteConnection:
    """The database at ``path``, its tables made if it is new.

    ``create=False`` (the read-only commands) refuses a missing file instead of making one.
    Raises :class:`HistoryUnusable` for a file that is not an SQLite database (a text file, a
    truncated one) or one of a newer schema.
    """
    if not create and not path.is_file():
        raise HistoryUnusable(f"history database {path} does not exist (simpler history import)")
    try:
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_S, isolation_level=None, factory=SqliteConnection
        )
    except (sqlite3.Error, OSError) as error:
        raise HistoryUnusable(f"cannot open history database {path}: {error}") from None
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise HistoryUnusable(
                f"history database {path} has schema {version}, newer than this simpler's "
                f"{SCHEMA_VERSION}: upgrade simpler to read it"
            )
        # The foreign keys are declared, not enforced (SQLite's default): a check per row
        # costs a new run's load a tenth, and guards nothing the import does not, which writes
        # a run's rows in one transaction; they are deleted together (run_rows.py).
        _use_wal(conn)
        if version < SCHEMA_VERSION:
            _create(conn)
    except sqlite3.DatabaseError as error:  # "file is not a database", a truncated file
        conn.close()
        raise HistoryUnusable(f"{path} is not a usable history database: {error}") from None
    except HistoryUnusable:
        conn.close()
        raise
    return conn


def _use_wal(conn: sqlite3.Connection) -> None:
    """WAL, so that readers never wait for an import. Switching a new file to it takes the
    file whole, and two first imports switching at once deadlock: SQLite answers one of them
    "database is locked" at once, without its busy wait. So wait here as the busy timeout
    would, and try again: the other's switch is over in milliseconds."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
        time.sleep(0.01)


def _create(conn: SqliteConnection) -> None:
    # Imported here: the store package imports this module first.
    from simpler.history.store.connection import transaction

    # One immediate transaction: two first imports at once make the tables once.
    with transaction(conn):
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == 1:  # schema 2 adds a column to a table schema 1 has
            conn.execute("ALTER TABLE run_phases ADD COLUMN duration_s REAL")
        if version < SCHEMA_VERSION:  # every table made that is not there yet
            for statement in DDL.split(";"):
                if statement.strip():
                    conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
