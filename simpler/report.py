"""The report file's public face: ``simpler.report.append(path, record)`` and ``read(path)``.

The implementation lives in :mod:`simpler.reporting.report_file`; this name is kept
because users and CI glue import it. Only the documented names are offered here.
"""

from __future__ import annotations

import os
from typing import Any

from simpler.contract.child import ChildContract
from simpler.reporting import report_file as _report_file
from simpler.reporting.records import common_fields

__all__ = [
    "ReportUnreadable",
    "append",
    "make_record",
    "read",
    "read_contents",
    "report_path",
]

ReportUnreadable = _report_file.ReportUnreadable
append = _report_file.append
read = _report_file.read
read_contents = _report_file.read_contents
report_path = _report_file.report_path


def make_record(record_type: str, **fields: Any) -> dict[str, Any]:
    """A record with the common fields; in a process of a run, its run id and phase as the
    run told it (``fields`` may name others)."""
    if record_type not in _report_file.RECORD_TYPES:
        known = ", ".join(_report_file.RECORD_TYPES)
        raise ValueError(f"unknown record type {record_type!r} (known: {known})")
    told = ChildContract.from_env(os.environ)
    return {**common_fields(record_type, told.run_id, told.phase), **fields}
