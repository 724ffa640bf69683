"""Reading one run out of a long-lived report file at a cost that does not grow with its history.

A run's follower remembers how far it has read and later reads only what was appended
since; other runs' lines are skipped by a byte search for the run id before any JSON is
parsed (docs/design.md, "The report file").
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import BinaryIO

from simpler.reporting.report_file import Record, ReportUnreadable, parse_record

__all__ = ["ReportFollower", "latest_run"]

_CHUNK = 1 << 20  # bytes read at a time: large enough for speed, small enough for memory
_BLOCK = 1 << 16  # bytes read at a time backwards from the end, for the latest run
_PROOF = 64  # bytes before the offset that must still be there for the offset to be valid


class ReportFollower:
    """This run's records of ``path`` in file order, read incrementally.

    Only complete lines are taken: a line still being written (no newline yet) is left for
    the next look. A file that was replaced (``simpler report --prune-before`` renames a new
    one over it) or cut shorter is noticed and read again from the start.
    """

    def __init__(self, path: Path, run_id: str) -> None:
        self.path = path
        self.run_id = run_id
        # Records are written by json.dumps with ensure_ascii, so the id appears as it encodes.
        self._token = json.dumps(run_id)[1:-1].encode() if run_id else b""
        self._records: list[Record] = []
        self.malformed = 0  # this run's lines that could not be read (torn, not a record)
        self._identity: tuple[int, int] | None = None
        self._offset = 0
        self._proof = b""  # the last bytes read, to notice a file rewritten in place

    def records(self) -> list[Record]:
        """A fresh look at the file; the list is the caller's own."""
        self.refresh()
        return list(self._records)

    def refresh(self) -> None:
        """Take the complete lines appended since the last look; ReportUnreadable if it cannot."""
        try:
            with open(self.path, "rb") as stream:
                status = os.fstat(stream.fileno())
                identity = (status.st_dev, status.st_ino)
                replaced = identity != self._identity or status.st_size < self._offset
                if replaced or not self._proof_holds(stream):
                    self._start_over(identity)
                stream.seek(self._offset)
                self._consume(stream)
        except OSError as error:
            self._start_over(None)  # gone or unreadable: nothing of it is known any more
            reason = error.strerror or str(error)
            raise ReportUnreadable(f"cannot read report file {self.path}: {reason}") from error

    def _start_over(self, identity: tuple[int, int] | None) -> None:
        self._identity = identity
        self._records = []
        self.malformed = 0
        self._offset = 0
        self._proof = b""

    def _proof_holds(self, stream: BinaryIO) -> bool:
        """The bytes just before the offset are those read last time (same file, same history)."""
        if not self._proof:
            return True
        stream.seek(self._offset - len(self._proof))
        return stream.read(len(self._proof)) == self._proof

    def _consume(self, stream: BinaryIO) -> None:
        pending = b""
        while chunk := stream.read(_CHUNK):
            data = pending + chunk
            end = data.rfind(b"\n") + 1
            if end == 0:  # no complete line yet
                pending = data
                continue
            self._take(data[:end])
            self._offset += end
            self._proof = data[max(0, end - _PROOF) : end]
            pending = data[end:]

    def _take(self, block: bytes) -> None:
        """Keep the records of this run among the complete lines of ``block``."""
        if self._token and self._token not in block:
            return  # a stretch of other runs' history: no line of it needs parsing
        for line in block.split(b"\n"):
            if not line.strip() or (self._token and self._token not in line):
                continue
            record = parse_record(line.decode("utf-8", errors="surrogateescape"))
            if record is None:
                self.malformed += 1
            elif record.run == self.run_id:
                self._records.append(record)


def latest_run(path: Path) -> str | None:
    """The run of the file's last record that names one, read backwards from the end;
    None when there is none or the file cannot be read."""
    try:
        with open(path, "rb") as stream:
            position = stream.seek(0, os.SEEK_END)
            head = b""  # the start of a line whose beginning is in the block before
            while position > 0:
                start = max(0, position - _BLOCK)
                stream.seek(start)
                lines = (stream.read(position - start) + head).split(b"\n")
                position = start
                head = lines.pop(0) if start > 0 else b""
                for line in reversed(lines):
                    run = _run_of(line)
                    if run:
                        return run
    except OSError:
        return None
    return None


def _run_of(line: bytes) -> str | None:
    if b'"run"' not in line:
        return None
    record = parse_record(line.decode("utf-8", errors="surrogateescape"))
    return record.run if record is not None and record.run else None
