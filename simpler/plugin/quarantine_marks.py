"""Marks the records of quarantined tests: ``quarantined: true``, or ``quarantine_expired``.

The run loaded the quarantine file before anything ran and names it in
``SIMPLER_QUARANTINE`` for every pytest process (xdist workers, Resource children, retry
processes); each process reads it once. Without it (plain pytest, a run with no file) the
cost is one environment lookup per record. The outcome is never touched: a quarantined
test keeps pytest's own, and the summary decides what it means for the exit code.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from simpler.reporting.quarantine_file import (
    QUARANTINE_ENV,
    QuarantineFile,
    QuarantineFileError,
    load_quarantine,
)

__all__ = ["MARKED_TYPES", "mark_test_quarantine"]

# The records that can decide a test's verdict: its results, crash and not-run records
# included, and a poison-skip registration (the verdict of a test never re-run).
MARKED_TYPES = frozenset({"test", "poison_skip"})

_loaded: dict[str, QuarantineFile | None] = {}  # per path: this process reads each once


def mark_test_quarantine(record: dict[str, Any], platform: str) -> None:
    """Add the quarantine fields to ``record`` when its test is covered by the run's file."""
    path = os.environ.get(QUARANTINE_ENV)
    if not path or record.get("type") not in MARKED_TYPES:
        return
    quarantine = _load(path)
    nodeid = record.get("nodeid")
    if quarantine is not None and isinstance(nodeid, str):
        record.update(quarantine.marks(nodeid, platform))


def _load(path: str) -> QuarantineFile | None:
    if path not in _loaded:
        try:
            _loaded[path] = load_quarantine(path)
        except QuarantineFileError as error:
            # The run checked the file before it started: it changed since. Unmarked, the
            # failures gate, which is the safe side; say why once.
            print(f"simpler: test quarantine not applied: {error}", file=sys.stderr)
            _loaded[path] = None
    return _loaded[path]
