"""The total of a coverage report on two cores: the files' analysis (parsing each source file,
most of a report's time) split between this process and a forked one.

Used for the summary's coverage line when no table is printed (a table needs every file in
one report). Each side loads the combined data on its own: nothing of one side's SQLite
connection crosses the fork.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from coverage.results import Numbers

__all__ = ["MIN_FILES", "split_totals"]

MIN_FILES = 40  # below this, a fork costs more than the half of the analysis it saves


def split_totals(data_file: Path, config_file: str | bool, files: list[str]) -> Numbers | None:
    """The total over ``files``, half of them analysed in a forked process; None when either
    half could not be reported (the caller then reports in one process)."""
    if len(files) < MIN_FILES or (os.cpu_count() or 1) < 2:
        return None
    half = len(files) // 2
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the forked half: its numbers, pickled, down the pipe
        code = 1
        try:
            os.close(read_end)
            numbers = _numbers(data_file, config_file, files[:half])
            with os.fdopen(write_end, "wb") as out:
                pickle.dump(numbers, out)
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    try:
        mine = _numbers(data_file, config_file, files[half:])
    finally:
        with os.fdopen(read_end, "rb") as incoming:
            payload = incoming.read()
        _, status = os.waitpid(pid, 0)
    if mine is None or os.waitstatus_to_exitcode(status) != 0 or not payload:
        return None
    theirs = pickle.loads(payload)
    return None if theirs is None else mine + theirs


def _numbers(data_file: Path, config_file: str | bool, files: list[str]) -> Numbers | None:
    import coverage
    from coverage.report import SummaryReporter

    cov = coverage.Coverage(data_file=str(data_file), config_file=config_file)
    cov.load()
    reporter = SummaryReporter(cov)
    reporter.output_format = "total"  # the figure only, no table
    with open(os.devnull, "w") as nowhere:
        try:
            reporter.report(files, nowhere)
        except coverage.CoverageException:
            return None
        finally:
            cov.get_data().close()  # its SQLite connection: 3.13 warns of one left open
    return reporter.total
