"""Marks the records of quarantined tests: ``quarantined: true``, or ``quarantine_expired``.

The run loaded the quarantine file before anything ran and tells every pytest process its path
(xdist workers, Resource children, retry processes: ``ChildContract.quarantine``); each process
reads the file once. Without it (plain pytest, a run with no file) nothing is marked. The
outcome is never touched: a quarantined test keeps pytest's own, and the summary decides what
it means for the exit code.
"""

from __future__ import annotations

import sys

from simpler.reporting.quarantine_file import (
    QuarantineFile,
    QuarantineFileError,
    load_quarantine,
)
from simpler.reporting.records import PoisonSkipRecord, Record, TestRecord

__all__ = ["MARKED_TYPES", "mark_test_quarantine"]

# The records that can decide a test's verdict: its results, crash and not-run records
# included, and a poison-skip registration (the verdict of a test never re-run).
MARKED_TYPES = (TestRecord, PoisonSkipRecord)

_loaded: dict[str, QuarantineFile | None] = {}  # per path: this process reads each once


def mark_test_quarantine(record: Record, platform: str, path: str | None) -> Record:
    """``record`` with the quarantine fields added when its test is covered by the run's
    quarantine file ``path`` (none: empty or None)."""
    if not path or not isinstance(record, MARKED_TYPES):
        return record
    quarantine = _load(path)
    if quarantine is None or not record.nodeid:
        return record
    return quarantine.mark(record, platform)


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
