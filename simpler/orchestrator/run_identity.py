"""Which run a ``simpler run`` belongs to: a new one, the file's latest, or one named."""

from __future__ import annotations

import os
import re
import secrets
import time
from pathlib import Path

from simpler.contract.settings import RUN_ID_ENV
from simpler.reporting.follow import latest_run

__all__ = ["check_run_id", "new_run_id", "run_id_for"]

# A run id travels through env vars, file names in CI and the summary: keep it plain.
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,127}")


def check_run_id(text: str) -> bool:
    return _RUN_ID.fullmatch(text) is not None


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)


def run_id_for(path: Path, *, explicit: str | None = None, starts_run: bool) -> str:
    """``--run-id``, else ``$SIMPLER_RUN_ID``; else a new id when this invocation starts a run
    (the l2 phase or ``--new-run``), else the latest run of the report file, so that
    ``--phases l2``, ``--phases resource``, ``--phases retry`` and ``simpler report`` in
    separate sessions make one run and one verdict."""
    named = explicit or os.environ.get(RUN_ID_ENV)
    if named:
        return named
    if not starts_run:
        # Read backwards from the end: the history before the latest run is never parsed.
        latest = latest_run(path)
        if latest:
            return latest
    return new_run_id()
