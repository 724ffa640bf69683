"""What the importer and the readers need of a history connection, and a transaction on one.

Both stores' connections provide it: SQLite's (``schema.SqliteConnection``, the stdlib
connection with the writes below) and the server's (``postgres.PgConnection``). The writes
are where the stores differ most: how one run's import keeps another import of the same run
out, and how many new rows are loaded at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from typing import Any, Protocol

__all__ = ["Connection", "Cursor", "transaction"]


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    def execute(
        self, sql: str, parameters: Sequence[Any] | Mapping[str, Any] = ..., /
    ) -> Cursor: ...

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Cursor: ...

    def lock_run(self, run_id: str, /) -> None:
        """Within a transaction: no other import of ``run_id`` until this one ends."""
        ...

    def insert_rows(
        self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], /
    ) -> int:
        """Add rows whose keys the table cannot hold yet (a new run's); how many."""
        ...

    def insert_passed_once(self, run_id: str, nodeids: Sequence[str], /) -> None:
        """The verdicts of a new run's tests that passed at their one attempt (most tests in
        most runs), once its attempts are stored."""
        ...

    def close(self) -> None: ...


@contextmanager
def transaction(conn: Connection) -> Iterator[None]:
    """One transaction that takes the write lock at once (SQLite's ``BEGIN IMMEDIATE``: two
    importers then queue instead of deadlocking on an upgrade from a read lock; a server's
    plain ``BEGIN``), committed when the block ends and rolled back when it raises.

    A rollback that fails too (the connection is gone, and the server has rolled the
    transaction back itself) leaves the error that ended the block to be reported.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        with suppress(Exception):
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
