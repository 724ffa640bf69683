"""The history on a PostgreSQL server (psycopg 3, the ``postgres`` extra).

The SQLite file's tables (``schema.py``) with PostgreSQL's types, byte-order text and no
foreign keys (``_postgres_ddl``); many importers at once (``lock_run``), new rows by ``COPY``,
the schema made or upgraded once under an advisory lock. The stores' shared SQL dialect is
turned into PostgreSQL's here (docs/history.md, "On a PostgreSQL server"). Every error names
host and database, never the password.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from simpler.history.schema import DDL, SCHEMA_VERSION, HistoryUnusable
from simpler.history.store.connection import transaction
from simpler.history.store.url import ServerUrl, parse_server_url

if TYPE_CHECKING:
    import psycopg
    from psycopg.adapt import Loader

__all__ = ["PgConnection", "connect_server"]

_VERSION_TABLE = "simpler_schema"
_LOCK_KEY = 0x5151_7E4  # the advisory lock that makes one creator or upgrader at a time
# The advisory locks of runs being imported: (this class, the hash of the run id). A
# two-number key never meets the one-number _LOCK_KEY; two runs whose ids hash alike only
# wait for each other.
_RUN_LOCK_CLASS = 0x5151
_NOTHING = object()
_PASSED_ONCE_COLUMNS = ("run_id", "nodeid", "outcome", "attempts")
# SQLite's named parameter ``:name`` (not a ``::`` cast, not inside a word) is psycopg's
# ``%(name)s``.
_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
# SQLite's ``CROSS JOIN t ON ...`` is an inner join in a fixed order (the readers use it to
# steer SQLite's planner); PostgreSQL allows no ON after CROSS JOIN and plans joins itself.
_CROSS_JOIN_ON = re.compile(r"\bCROSS JOIN (\w+ AS \w+\s+ON)\b")
# SQLite's ``IN win`` (a one-column table or CTE) is ``IN (SELECT run_id FROM win)``.
_IN_WINDOW = re.compile(r"\bIN win\b")
# SQLite's "no limit" is ``LIMIT -1``, which PostgreSQL refuses; its own is ``LIMIT NULL``.
_LIMIT = re.compile(r"\bLIMIT (%\(\w+\)s|%s)")


def _postgres_ddl() -> list[str]:
    # No foreign keys: PostgreSQL checks one per row with a query of its own, which doubles
    # the cost of loading a new run's rows (10,000 for 5,000 tests). They would guard nothing
    # the import does not: a run's rows are written in one transaction under the run's lock,
    # and deleted together (run_rows.py).
    ddl = DDL.replace(" REAL", " DOUBLE PRECISION").replace(") WITHOUT ROWID", ")")
    ddl = ddl.replace(" REFERENCES runs(run_id) ON DELETE CASCADE", "")
    # Text compared byte by byte, as SQLite compares it: the same order from every ORDER BY
    # on both stores whatever the server's locale, and keys compared without the locale's
    # rules (a fifth of loading a run's rows on a server in a UTF-8 locale).
    ddl = ddl.replace(" TEXT", ' TEXT COLLATE "C"')
    statements = [s.strip() for s in ddl.split(";") if s.strip()]
    return [f"CREATE TABLE IF NOT EXISTS {_VERSION_TABLE} (version INTEGER NOT NULL)", *statements]


class _NoRows:
    """What a statement PostgreSQL has no counterpart for returns."""

    rowcount = -1

    def fetchone(self) -> Any:
        return None

    def fetchall(self) -> list[Any]:
        return []

    def __iter__(self) -> Any:
        return iter(())


class PgConnection:
    """A psycopg connection that takes the stores' shared dialect, in autocommit like the
    SQLite connection (``BEGIN``/``COMMIT`` are the callers')."""

    def __init__(self, raw: psycopg.Connection[Any], url: ServerUrl) -> None:
        self._raw = raw
        self._url = url
        self._sql: dict[str, str | None] = {}

    def _translate(self, sql: str) -> str | None:
        known = self._sql.get(sql, _NOTHING)
        if known is not _NOTHING:
            return known  # type: ignore[return-value]
        head = sql.lstrip()[:16].upper()
        if head.startswith(("PRAGMA", "VACUUM")):
            translated: str | None = None
        elif head.startswith("BEGIN"):
            translated = "BEGIN"
        else:
            translated = _NAMED.sub(r"%(\1)s", sql.replace("%", "%%").replace("?", "%s"))
            translated = _CROSS_JOIN_ON.sub(r"JOIN \1", translated)
            translated = _IN_WINDOW.sub("IN (SELECT run_id FROM win)", translated)
            translated = _LIMIT.sub(r"LIMIT NULLIF(\1, -1)", translated)
        self._sql[sql] = translated
        return translated

    def execute(self, sql: str, parameters: Sequence[Any] | Mapping[str, Any] = (), /) -> Any:
        translated = self._translate(sql)
        if translated is None:
            return _NoRows()
        # Bound on the client, as SQLite binds: a value's type is its Python type, so that
        # ``:since IS NULL`` with no since needs no cast (a server-side bind cannot type it).
        # Many rows (executemany) bind on the server, in one pipeline.
        import psycopg

        cursor = psycopg.ClientCursor(self._raw)
        try:
            # Even no parameters is a sequence: the %% that stands for a % is then read back.
            return cursor.execute(translated, parameters)
        except self._errors() as error:
            raise self.unusable(error) from None

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Any:
        translated = self._translate(sql)
        if translated is None:
            return _NoRows()
        cursor = self._raw.cursor()
        try:
            cursor.executemany(translated, list(parameters))
        except self._errors() as error:
            raise self.unusable(error) from None
        return cursor

    def lock_run(self, run_id: str, /) -> None:
        """An advisory lock on the run, held to the transaction's end: imports of one run
        queue while imports of other runs go on. Each import transaction takes this one lock
        and writes only its run's rows, besides the suites' (``suites.py``), which it adds
        in node id order and skips where present: no two imports wait on each other in a
        circle, so no deadlock is left to the server to break."""
        self.execute("SELECT pg_advisory_xact_lock(?, hashtext(?))", (_RUN_LOCK_CLASS, run_id))

    def insert_rows(
        self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], /
    ) -> int:
        """The rows through ``COPY``: one stream, not a statement per row (a run of 5,000
        tests is 10,000 rows of attempts and verdicts)."""
        names = ", ".join(f'"{column}"' for column in columns)
        written = 0
        cursor = self._raw.cursor()
        try:
            with cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
                    written += 1
        except self._errors() as error:
            raise self.unusable(error) from None
        return written

    def insert_passed_once(self, run_id: str, nodeids: Sequence[str], /) -> None:
        """Loaded with ``COPY`` from the node ids the reader sent: on a server, twice as fast
        as deriving them from the attempts as the file does."""
        self.insert_rows(
            "verdicts", _PASSED_ONCE_COLUMNS, ((run_id, nodeid, "passed", 1) for nodeid in nodeids)
        )

    def close(self) -> None:
        self._raw.close()

    def unusable(self, error: BaseException) -> HistoryUnusable:
        return _unusable(self._url, "history server", error)

    @staticmethod
    def _errors() -> type[Exception]:
        import psycopg

        return psycopg.Error


def _unusable(url: ServerUrl, what: str, error: BaseException) -> HistoryUnusable:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    reason = url.scrub(lines[0] if lines else type(error).__name__)
    return HistoryUnusable(f"{what} {url.label}: {reason}")


def connect_server(ref: str, *, create: bool = True) -> PgConnection:
    """The server ``ref`` names, its tables made or upgraded if ``create``."""
    url = parse_server_url(ref)
    try:
        import psycopg
        from psycopg.adapt import Loader
    except ImportError:
        raise HistoryUnusable(
            f"history server {url.label} needs psycopg: pip install 'simpler[postgres]'"
        ) from None
    try:
        raw = psycopg.connect(ref, autocommit=True)
    except psycopg.Error as error:
        raise _unusable(url, "cannot connect to history server", error) from None
    except ValueError as error:  # psycopg's own parse of the URL
        raise _unusable(url, "history URL does not parse for", error) from None
    raw.adapters.register_loader("numeric", _numeric_loader(Loader))
    conn = PgConnection(raw, url)
    try:
        version = _version(conn)
        if version > SCHEMA_VERSION:
            raise HistoryUnusable(
                f"history server {url.label} has schema {version}, newer than this simpler's "
                f"{SCHEMA_VERSION}: upgrade simpler to read it"
            )
        if version < SCHEMA_VERSION:
            if not create and version == 0:
                raise HistoryUnusable(
                    f"history server {url.label} holds no history (simpler history import)"
                )
            _upgrade(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _numeric_loader(base: Any) -> type[Loader]:
    """``numeric`` (a sum of ``bigint``, an average) as SQLite answers the same query: an
    ``int`` where it is whole by type, a ``float`` where it has decimals."""

    class NumericLoader(base):  # type: ignore[misc]  # psycopg imported only when needed
        def load(self, data: Any) -> int | float:
            text = bytes(data).decode()
            return float(text) if any(c in text for c in ".eEN") else int(text)

    return NumericLoader


def _version(conn: PgConnection) -> int:
    present = conn.execute("SELECT to_regclass(?) IS NOT NULL", (_VERSION_TABLE,)).fetchone()
    if not present[0]:
        return 0
    row = conn.execute(f"SELECT max(version) FROM {_VERSION_TABLE}").fetchone()
    return int(row[0] or 0)


def _upgrade(conn: PgConnection) -> None:
    # DDL is transactional on PostgreSQL: a failed upgrade leaves the old schema whole.
    with transaction(conn):
        conn.execute("SELECT pg_advisory_xact_lock(?)", (_LOCK_KEY,))
        version = _version(conn)  # another importer may have upgraded while we waited
        if version == 1:  # schema 2 adds a column to a table schema 1 has
            conn.execute("ALTER TABLE run_phases ADD COLUMN duration_s DOUBLE PRECISION")
        if version < SCHEMA_VERSION:  # every table made that is not there yet
            for statement in _postgres_ddl():
                conn.execute(statement)
        conn.execute(f"DELETE FROM {_VERSION_TABLE}")
        conn.execute(f"INSERT INTO {_VERSION_TABLE} (version) VALUES (?)", (SCHEMA_VERSION,))
