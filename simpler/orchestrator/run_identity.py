"""Which run a ``simpler run`` belongs to: a new one, the file's latest, or one named."""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

from simpler.reporting import report_file

__all__ = ["new_run_id", "run_id_for"]


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)


def run_id_for(path: Path, *, starts_run: bool) -> str:
    """A new id for a run that starts with a test phase; otherwise continue the file's latest."""
    if os.environ.get("SIMPLER_RUN_ID"):
        return os.environ["SIMPLER_RUN_ID"]
    if not starts_run:
        try:
            runs = [r["run"] for r in report_file.read(path) if r.get("run")]
        except report_file.ReportUnreadable:
            runs = []
        if runs:
            return str(runs[-1])
    return new_run_id()
