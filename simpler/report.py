"""The report file's public face: ``simpler.report.append(path, record)`` and ``read(path)``.

The implementation lives in :mod:`simpler.reporting.report_file`; this name is kept
because users and CI glue import it. Only the documented names are offered here.
"""

from simpler.reporting import report_file as _report_file

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
make_record = _report_file.make_record
read = _report_file.read
read_contents = _report_file.read_contents
report_path = _report_file.report_path
