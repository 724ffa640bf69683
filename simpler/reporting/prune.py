"""``simpler report --prune-before RUN|DATE``: trim a long-lived report file in one atomic step.

The file is rewritten while its writers' lock is held: a new file is written beside it,
flushed to disk and renamed over it, so a reader sees the old file or the new one, never
half of either, and a writer blocked meanwhile appends to the new file (see
``report_file.append``). Kept lines are copied byte for byte.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from simpler.base.compat import UTC, iso_moment
from simpler.reporting.report_file import (
    Record,
    ReportUnreadable,
    ReportUnwritable,
    locked_report,
    parse_record,
)
from simpler.usage import UsageError

__all__ = ["PruneRefused", "PruneResult", "parse_cutoff", "prune_before", "prune_command"]


class PruneRefused(ValueError):
    """The cut names neither a run of the file nor a date: the user's input, not the machine."""


@dataclass(frozen=True)
class PruneResult:
    removed_runs: int
    removed_records: int
    kept_runs: int
    kept_records: int
    dropped_unreadable: int  # torn or foreign lines among what was removed

    def line(self, path: Path) -> str:
        unreadable = (
            f" and {self.dropped_unreadable} unreadable line(s)" if self.dropped_unreadable else ""
        )
        return (
            f"pruned {path}: removed {self.removed_runs} run(s), {self.removed_records} "
            f"record(s){unreadable}; kept {self.kept_runs} run(s), {self.kept_records} record(s)"
        )


def prune_command(files: list[str], cut: str, *, summary_options: bool) -> int:
    """``simpler report --prune-before CUT``: one line saying what went and what stayed."""
    if len(files) > 1 or summary_options:
        raise UsageError("simpler report: --prune-before trims one --file and prints no summary")
    path = Path(files[0])
    try:
        result = prune_before(path, cut)
    except PruneRefused as error:
        raise UsageError(f"simpler report: {error}") from None
    print(result.line(path))
    return 0


def parse_cutoff(text: str) -> float | None:
    """An ISO date or datetime as seconds since the epoch (UTC unless it names a zone);
    None when ``text`` is not one."""
    try:
        moment = iso_moment(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def prune_before(path: Path, cut: str) -> PruneResult:
    """Drop every record of the runs that started before run ``cut`` (by where its first
    record is) or before the date ``cut``; the file is left alone when nothing is dropped."""
    try:
        with locked_report(path) as fd:
            with os.fdopen(os.dup(fd), "rb") as stream:
                lines = stream.read().splitlines(keepends=True)
            records = [parse_record(raw.decode("utf-8", errors="surrogateescape")) for raw in lines]
            drop = _drop_rule(path, cut, records)
            keep = _kept_lines(records, drop)
            result = _count(lines, records, keep)
            if result.removed_records or result.dropped_unreadable:
                _replace(path, fd, [raw for raw, kept in zip(lines, keep, strict=True) if kept])
            return result
    except (PruneRefused, ReportUnwritable):
        raise
    except OSError as error:
        reason = error.strerror or str(error)
        raise ReportUnreadable(f"cannot read report file {path}: {reason}") from None


def _drop_rule(path: Path, cut: str, records: list[Record | None]) -> Callable[[int, Record], bool]:
    """Whether the record at an index goes: by its run's start, or its own for run-less ones."""
    first_index: dict[str, int] = {}
    started: dict[str, float] = {}
    for index, record in enumerate(records):
        if record is None or not record.run:
            continue
        first_index.setdefault(record.run, index)
        ts = record.ts
        if ts is not None:
            started.setdefault(record.run, ts)  # the first record that carries a time
    if cut in first_index:
        boundary = first_index[cut]

        def before_run(index: int, record: Record) -> bool:
            run = record.run
            return (first_index[run] if run else index) < boundary

        return before_run
    cutoff = parse_cutoff(cut)
    if cutoff is None:
        raise PruneRefused(
            f"--prune-before {cut!r} is neither a run of {path} nor an ISO date or datetime"
        )

    def before_date(_index: int, record: Record) -> bool:
        run = record.run
        ts = started.get(run) if run else record.ts
        return ts is not None and ts < cutoff  # no time at all: not known to be old, kept

    return before_date


def _kept_lines(records: list[Record | None], drop: Callable[[int, Record], bool]) -> list[bool]:
    """Records by the rule; a line that is no record stays only after the first kept record
    (it may be evidence of the runs kept), so pruning also trims a torn history's head."""
    keep: list[bool] = []
    kept_any = False
    for index, record in enumerate(records):
        if record is None:
            keep.append(kept_any)
            continue
        kept = not drop(index, record)
        kept_any = kept_any or kept
        keep.append(kept)
    return keep


def _count(lines: list[bytes], records: list[Record | None], keep: list[bool]) -> PruneResult:
    kept_runs, removed_runs = set(), set()
    kept_records = removed_records = unreadable = 0
    for raw, record, kept in zip(lines, records, keep, strict=True):
        if record is None:
            unreadable += not kept and bool(raw.strip())
        elif kept:
            kept_records += 1
            kept_runs.add(record.run)
        else:
            removed_records += 1
            removed_runs.add(record.run)
    kept_runs.discard("")
    removed_runs.discard("")
    return PruneResult(len(removed_runs), removed_records, len(kept_runs), kept_records, unreadable)


def _replace(path: Path, locked_fd: int, lines: list[bytes]) -> None:
    """Write ``lines`` to a new file beside ``path``, flush it, and rename it over ``path``."""
    mode = stat.S_IMODE(os.fstat(locked_fd).st_mode)
    try:
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".prune")
    except OSError as error:
        reason = error.strerror or str(error)
        raise ReportUnwritable(f"cannot rewrite report file {path}: {reason}") from None
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.writelines(lines)
            stream.flush()
            os.fchmod(stream.fileno(), mode)
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        reason = error.strerror or str(error)
        raise ReportUnwritable(f"cannot rewrite report file {path}: {reason}") from None
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """The rename itself survives a crash only once the folder is flushed too."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # a folder that cannot be opened for this cannot be flushed: the rename stands
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
