"""``simpler run --history F`` (or ``SIMPLER_HISTORY``): the run goes into the history database.

The database is opened before any test runs, so a file that is not one stops the run at
once (one line, exit 3) instead of after an hour of tests. The run is imported when its
report phase has ended, from the records the run already holds in memory: the report
file is not read again, so the import costs the run almost nothing.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from simpler.contract import EXIT_INFRA
from simpler.contract.settings import HISTORY_ENV
from simpler.orchestrator.context import RunContext

__all__ = ["IMPORTED_PREFIX", "check_history", "history_target", "import_run"]

IMPORTED_PREFIX = "simpler: run imported into the history"


def history_target(explicit: str | None) -> str | None:
    """``--history`` if given, else ``SIMPLER_HISTORY``, else no history for this run: a file
    as an absolute path, a server URL as it is."""
    from simpler.history.store import is_server

    chosen = explicit or os.environ.get(HISTORY_ENV) or None
    if not chosen:
        return None
    return chosen if is_server(chosen) else str(Path(chosen).resolve())


def check_history(ref: str) -> None:
    """Open (and if new, create) the store now; raises ``HistoryUnusable`` or
    ``BadStoreUrl``."""
    from simpler.history.store import open_store

    open_store(ref).close()


def import_run(ctx: RunContext, returncode: int) -> int:
    """Import this run; the run's exit code, or 3 with one line when the import failed."""
    if ctx.setup.history is None:
        return returncode
    started = time.perf_counter()  # the modules' import included: a run without one skips it
    from simpler.history.store.url import store_label

    label = store_label(ctx.setup.history)  # a server's password is never printed
    try:
        from simpler.history.importer import import_records
        from simpler.history.store import open_store

        conn = open_store(ctx.setup.history)
        try:
            summary = import_records(
                # The importer reads dicts: its hot loop parses lines without typing them.
                conn,
                [record.to_dict() for record in ctx.records()],
                source=str(ctx.setup.report),
                only_run=ctx.setup.run_id,
            )
        finally:
            conn.close()
    except Exception as error:  # the database, the disk, a bug: one line, exit 3
        print(f"simpler: run not imported into {label}: {error}", file=sys.stderr)
        return EXIT_INFRA
    # On stderr: the summary's verdict stays the last line of the run's output. The time is
    # what the benchmark holds against the run's wall time.
    print(
        f"{IMPORTED_PREFIX} {label}: {summary.attempts} attempt(s) "
        f"in {time.perf_counter() - started:.3f}s",
        file=sys.stderr,
    )
    return returncode
