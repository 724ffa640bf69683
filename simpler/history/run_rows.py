"""A run's rows in every table, deleted together (``prune``, ``copy``).

Deleted table by table rather than through the schema's ``ON DELETE CASCADE``: a server's
tables have no foreign keys (``store/postgres.py`` says why), and the file's cascade would
need ``PRAGMA foreign_keys`` set outside the transaction. The importer writes a run's rows
in one transaction under the run's lock, so no row outlives its run but by a delete here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from simpler.history.store.connection import Connection

__all__ = ["delete_runs"]

# The run's own rows first, its row in runs last: the file's foreign keys hold throughout.
_TABLES_OF_A_RUN = (
    "attempts", "verdicts", "run_phases", "affected_selected", "affected_runs", "runs",
)  # fmt: skip


def delete_runs(conn: Connection, run_ids: str, parameters: Sequence[Any]) -> int:
    """Delete the runs ``run_ids`` names (a ``?`` or a query of run ids, with ``parameters``)
    and all their rows; how many runs. Call it within a transaction."""
    deleted = 0
    for table in _TABLES_OF_A_RUN:
        deleted = conn.execute(
            f"DELETE FROM {table} WHERE run_id IN ({run_ids})", parameters
        ).rowcount
    return deleted
