"""The shared report file: append-only JSON Lines, written by every phase and process.

One record a line, one ``write`` under an exclusive ``flock`` on an ``O_APPEND`` descriptor;
readers skip and count malformed lines (docs/design.md, "The report file"). Lines become the
typed records of :mod:`simpler.reporting.records`; ``read`` and ``read_contents`` give users
dicts (``simpler.report``).
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simpler.base.atomic_write import make_parent_dir
from simpler.contract.settings import REPORT_ENV
from simpler.reporting import records
from simpler.reporting.records import OtherRecord, Record

__all__ = [
    "DEFAULT_REPORT",
    "RECORD_TYPES",
    "SCHEMA",
    "Record",
    "ReportContents",
    "ReportRecords",
    "ReportUnreadable",
    "ReportUnwritable",
    "append",
    "locked_report",
    "parse_line",
    "parse_record",
    "read",
    "read_contents",
    "read_records",
    "report_path",
    "write_record",
]

SCHEMA = records.SCHEMA
DEFAULT_REPORT = Path(".simpler") / "report.jsonl"
RECORD_TYPES = tuple(records.RECORD_TYPES)


class ReportUnreadable(OSError):
    """The report file cannot be opened or read at all (an infrastructure failure)."""


class ReportUnwritable(OSError):
    """A record cannot be appended: the message is one line naming the file and why."""


@dataclass
class ReportContents:
    records: list[dict[str, Any]] = field(default_factory=list)
    malformed: int = 0  # lines skipped: torn, not JSON, not a record


@dataclass
class ReportRecords:
    records: list[Record] = field(default_factory=list)
    malformed: int = 0  # lines skipped: torn, not JSON, not a record of a known type


def report_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """``--report`` if given, else ``SIMPLER_REPORT``, else ``.simpler/report.jsonl``."""
    chosen = explicit or os.environ.get(REPORT_ENV) or DEFAULT_REPORT
    return Path(chosen)


def write_record(path: str | os.PathLike[str], record: Record) -> None:
    """Append a typed record as its line: how simpler's own writers write (``append``, the
    users' face, takes a dict)."""
    append(path, record.raw)


def append(path: str | os.PathLike[str], record: Mapping[str, Any]) -> None:
    """Append ``record`` as one line; safe against any number of concurrent writers."""
    line = (json.dumps(record, separators=(",", ":"), default=str) + "\n").encode()
    target = Path(path)
    try:
        make_parent_dir(target)
        fd = _open_locked(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    except OSError as error:
        reason = error.strerror or str(error)
        raise ReportUnwritable(f"cannot write report file {target}: {reason}") from None
    try:
        written = os.write(fd, line)
        while written < len(line):  # a short write is rare, but must not tear the line
            written += os.write(fd, line[written:])
    finally:
        os.close(fd)  # closing releases the lock


@contextmanager
def locked_report(path: Path) -> Iterator[int]:
    """The report file opened for reading under the writers' exclusive lock, held until exit:
    no record is appended meanwhile (``simpler report --prune-before`` rewrites it so)."""
    fd = _open_locked(path, os.O_RDONLY)
    try:
        yield fd
    finally:
        os.close(fd)


def _open_locked(path: Path, flags: int) -> int:
    """A descriptor of the file now at ``path``, holding its exclusive lock.

    A prune renames a new file over the old one while it holds the old one's lock: a writer
    that was waiting for that lock finds its descriptor names a file no longer at ``path``,
    and opens the path again, so its record goes into the file readers read.
    """
    while True:
        fd = os.open(path, flags | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            held = os.fstat(fd)
            try:
                current = os.stat(path)
            except FileNotFoundError:
                current = None
        except BaseException:
            os.close(fd)
            raise
        if current is not None and (held.st_dev, held.st_ino) == (current.st_dev, current.st_ino):
            return fd
        os.close(fd)


def read(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    return read_contents(path).records


def read_contents(path: str | os.PathLike[str]) -> ReportContents:
    """Every well-formed record of ``path`` as a dict, in file order, and the count of
    skipped lines (the users' face of :func:`read_records`)."""
    typed = read_records(path)
    return ReportContents([record.to_dict() for record in typed.records], typed.malformed)


def read_records(path: str | os.PathLike[str]) -> ReportRecords:
    """Every well-formed record of ``path``, typed, in file order, and the count of skipped
    lines: the one place a report file is read whole."""
    contents = ReportRecords()
    try:
        # Streamed like any text file; bytes that are not UTF-8 survive as lone surrogates,
        # so a binary line is found and counted instead of failing the whole read.
        with open(path, encoding="utf-8", errors="surrogateescape") as lines:
            for line in lines:
                if not line or line.isspace():
                    continue
                record = parse_record(line)
                if record is None:
                    contents.malformed += 1
                else:
                    contents.records.append(record)
    except OSError as error:
        raise ReportUnreadable(f"cannot read report file {path}: {error.strerror}") from error
    return contents


def parse_record(line: str) -> Record | None:
    """The record on one line, or None for a torn, binary or foreign line: one of a type
    this version does not know is skipped and counted like a torn one (docs/design.md,
    The report file), so a newer writer's record never reads as something it is not."""
    record = records.parse(line)
    return None if record is None or isinstance(record, OtherRecord) else record


def parse_line(line: str) -> dict[str, Any] | None:
    """The record on one line as a dict, or None for a torn, binary or foreign line."""
    record = parse_record(line)
    return None if record is None else record.to_dict()
