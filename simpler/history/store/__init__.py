"""Where a history is kept: a SQLite file, or a PostgreSQL server named by its URL.

Every place that names a history (``--history``, ``--db``, ``SIMPLER_HISTORY``) passes the
string here. The importer and every reader talk to the :class:`Connection` this returns and
write their SQL once, in the dialect both stores agree on (``?`` placeholders, ``ON CONFLICT``
upserts, ``excluded``); what differs lives in one module per store: ``schema.py`` (SQLite)
and ``store/postgres.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

from simpler.contract.settings import HISTORY_ENV
from simpler.history.schema import DEFAULT_DB, HistoryUnusable
from simpler.history.store.connection import Connection
from simpler.history.store.url import BadStoreUrl, is_server, store_label, store_title

__all__ = [
    "BadStoreUrl",
    "Connection",
    "HistoryUnusable",
    "is_server",
    "open_store",
    "store_label",
    "store_ref",
    "store_title",
]


def store_ref(explicit: str | os.PathLike[str] | None = None) -> str:
    """``--db`` if given, else ``SIMPLER_HISTORY``, else ``.simpler/history.db``."""
    return os.fspath(explicit or os.environ.get(HISTORY_ENV) or DEFAULT_DB)


def open_store(ref: str, *, create: bool = True) -> Connection:
    """The history ``ref`` names, its tables made (or upgraded) if ``create``.

    Raises :class:`BadStoreUrl` (exit 2) for a server URL that does not parse and
    :class:`HistoryUnusable` (exit 3) for a store that cannot be used.
    """
    if is_server(ref):
        from simpler.history.store.postgres import connect_server

        return connect_server(ref, create=create)
    from simpler.history.schema import connect

    return connect(Path(ref), create=create)
