"""Report files into the history database: ``simpler history import`` and ``simpler run --history``.

Each file is read once, its runs attributed as they stream; each run of each file is stored
in one transaction, idempotently and in any order, so shards and copies of one run merge
(docs/history.md, "How an import stores a run").
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from json import dumps, loads
from json.decoder import JSONDecoder
from json.scanner import make_scanner
from pathlib import Path
from typing import Any

import orjson

from simpler.history.attempt_merge import UPSERT_ATTEMPT, winning_attempts
from simpler.history.parallel_read import read_in_order
from simpler.history.parsed_run import SHAPES, ReadRun, RunPart
from simpler.history.run_meta import MetaSource, RunMeta, RunPhases, record_key
from simpler.history.shadow_rows import keep_shadow_decision
from simpler.history.store.connection import Connection, transaction
from simpler.history.suites import record_suite, suite_of
from simpler.history.verdict_rows import (
    ATTEMPT_COLUMNS,
    INSERT_VERDICT,
    VERDICT_COLUMNS,
    verdict_rows,
)
from simpler.reporting.records import Record, TestRecord
from simpler.reporting.report_file import RECORD_TYPES, ReportUnreadable

__all__ = ["ImportSummary", "NotAReport", "import_records", "import_reports"]

_TYPES = frozenset(RECORD_TYPES)
_TEST = TestRecord.type_name
_scan = make_scanner(JSONDecoder())  # type: ignore[arg-type]  # typeshed: the C scanner
_READ_BACK = "SELECT {} FROM attempts WHERE run_id = ? ORDER BY nodeid, phase, attempt".format(
    ", ".join(ATTEMPT_COLUMNS)
)
# A run's completeness changed since its attempts were stored: their causes follow it.
_RECAUSE = """
UPDATE attempts SET cause = CASE WHEN ? THEN own_cause ELSE 'infra' END
WHERE run_id = ? AND own_cause IS NOT NULL
"""
_UPSERT_PHASE = """
INSERT INTO run_phases (run_id, phase, source, starts, ends, returncode, duration_s)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (run_id, phase, source) DO UPDATE SET
    starts = excluded.starts, ends = excluded.ends, returncode = excluded.returncode,
    duration_s = excluded.duration_s
"""
_UPSERT_RUN = """
INSERT INTO runs (run_id, "commit", branch, runner, platform, started, ended, complete,
                  exit_code, imported)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (run_id) DO UPDATE SET
    "commit" = excluded."commit", branch = excluded.branch, runner = excluded.runner,
    platform = excluded.platform, started = excluded.started, ended = excluded.ended,
    complete = excluded.complete, exit_code = excluded.exit_code, imported = excluded.imported
"""


class NotAReport(ValueError):
    """A file in which no line is a report record (a text file, an image): one line, exit 2."""


@dataclass
class ImportSummary:
    files: int = 0
    runs_new: list[str] = field(default_factory=list)
    runs_updated: list[str] = field(default_factory=list)
    attempts: int = 0  # attempt rows written (new or replaced)
    malformed: int = 0  # lines skipped: torn, not JSON, not a record

    def __str__(self) -> str:
        runs = len(self.runs_new) + len(self.runs_updated)
        text = (
            f"{runs} run(s) from {self.files} file(s): {len(self.runs_new)} new, "
            f"{len(self.runs_updated)} updated, {self.attempts} attempt(s) written"
        )
        return text + (f", {self.malformed} malformed line(s) skipped" if self.malformed else "")

    def _count(self, run_id: str, *, new: bool) -> None:
        if run_id in self.runs_new or run_id in self.runs_updated:
            return
        (self.runs_new if new else self.runs_updated).append(run_id)


def import_reports(
    conn: Connection,
    paths: Iterable[str | os.PathLike[str]],
    *,
    commit: str | None = None,
    branch: str | None = None,
    runner: str | None = None,
    only_run: str | None = None,
) -> ImportSummary:
    """Import report files; ``only_run`` imports one run of them and skips the rest unparsed.

    Raises :class:`NotAReport` for a file no line of which is a record and
    :class:`~simpler.reporting.report_file.ReportUnreadable` (an ``OSError``) for one that
    cannot be read; runs of files before it stay imported.
    """
    summary = ImportSummary()
    meta = MetaSource(commit, branch, runner)
    files = [Path(path) for path in paths]
    read = partial(_read_report, only_run=only_run)
    _tune_for_import(conn)
    with _without_cycle_collection():
        for parts, malformed in read_in_order(read, files):
            summary.files += 1
            summary.malformed += malformed
            _store_parts(conn, parts, meta, summary)
    return summary


@contextmanager
def _without_cycle_collection() -> Iterator[None]:
    """No cyclic garbage collection while importing: a run's attempts stay alive until it is
    stored, and the collector would walk them again and again (a sixth of the import's time)
    for cycles that the import never makes."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def import_records(
    conn: Connection,
    records: Iterable[dict[str, Any]],
    *,
    source: str | None = None,
    only_run: str | None = None,
    commit: str | None = None,
    branch: str | None = None,
    runner: str | None = None,
) -> ImportSummary:
    """Import records already read, in file order (``simpler run --history`` hands over its
    run's). ``source``, the report they were read from, only documents the call: a source is
    known by its first record, so the same file imported later is the same source."""
    summary = ImportSummary(files=1)
    parts: dict[str, RunPart] = {}
    with _without_cycle_collection():
        for record in records:
            if not isinstance(record, dict) or record.get("type") not in _TYPES:
                summary.malformed += 1
                continue
            part = _part_of(parts, record, only_run)
            if part is not None:
                part.add(record)
        finished = [part.finish() for part in parts.values()]
        _tune_for_import(conn)
        _store_parts(conn, finished, MetaSource(commit, branch, runner), summary)
    return summary


def _read_report(path: Path, *, only_run: str | None) -> tuple[list[ReadRun], int]:
    parts: dict[str, RunPart] = {}
    malformed = records = 0
    # Once the file has shown it is a report, lines that cannot hold the run are not parsed.
    wanted = dumps(only_run).encode() if only_run else None  # the id as the writer encodes it
    last_run: object = None
    part: RunPart | None = None
    try:
        with _without_cycle_collection(), open(path, "rb") as stream:
            for line in stream:
                if wanted is not None and records and wanted not in line:
                    continue
                record = _parse(line)
                if record is None:
                    if not line.isspace():
                        malformed += 1
                    continue
                records += 1
                run = record.get("run")
                if run != last_run or part is None:
                    last_run, part = run, _part_of(parts, record, only_run)
                    if part is None:
                        continue
                # The hot loop: a test record stays a dict here (a long history holds a
                # million); RunPart types the others, which are few.
                if record["type"] == _TEST:
                    part.test(record)
                else:
                    part.other(record)
    except OSError as error:
        raise ReportUnreadable(f"cannot read report file {path}: {error.strerror}") from error
    if not records and malformed:
        raise NotAReport(f"{path} is not a simpler report: no line of it is a report record")
    return [part.finish() for part in parts.values()], malformed


def _parse(line: bytes) -> dict[str, Any] | None:
    """The record on one line, or None for a torn, binary or foreign line (as parse_line).

    orjson first: it reads the bytes as they are, in a third of the time json's scanner
    takes, and refuses what is not one valid UTF-8 JSON value. What it refuses (two records
    on a line, bytes that are not UTF-8, ``NaN``, an integer beyond 64 bits) is judged as
    json would judge it.
    """
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return _parse_text(line.decode("utf-8", "surrogateescape"))
    if type(record) is not dict or record.get("type") not in _TYPES:
        return None
    return record


def _parse_text(line: str) -> dict[str, Any] | None:
    """A line orjson refused, read with json's own C scanner, called directly
    (``json.loads`` adds two regular expressions and three Python calls to every line)."""
    try:
        record, end = _scan(line, 0)
    except (ValueError, StopIteration):
        try:  # what the scanner refuses (leading blanks) json.loads may still read
            record, end = loads(line), len(line)
        except ValueError:
            return None
    if end < len(line) - 1 and not line[end:].isspace():
        return None  # two records on one line: a torn write
    if type(record) is not dict or record.get("type") not in _TYPES:
        return None
    # A byte that was not UTF-8 survives decoding as a lone surrogate, which no database
    # text may hold: such a line is torn or binary.
    if not line.isascii() and not _utf8(line):
        return None
    return record


def _utf8(line: str) -> bool:
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _part_of(
    parts: dict[str, RunPart], record: dict[str, Any], only_run: str | None
) -> RunPart | None:
    """The part of the record's run (made on its first record), None for a run not wanted."""
    run = Record(record).run
    part = parts.get(run)
    if part is None:
        if only_run and run != only_run:
            return None
        # No run id (plain pytest, outside simpler run): the file is one run. Its id is its
        # first such record's key, not the file's name or content hash: the same in every
        # copy of the file and as the file grows, so a later import completes that run.
        part = parts[run] = RunPart(run or f"file-{record_key(record)}", record)
    return part


def _tune_for_import(conn: Connection) -> None:
    """Once per import, for this connection only (readers keep SQLite's defaults)."""
    # WAL without a sync per commit: a crash of the machine may lose the last runs imported
    # (import them again), never corrupt the database; a sync each run would dominate.
    conn.execute("PRAGMA synchronous = NORMAL")
    # A checkpoint (copying the log into the database, with a sync) every 40 MB rather than
    # every 4 MB, and a 64 MB page cache: a backfill's commits then cost a tenth less.
    conn.execute("PRAGMA wal_autocheckpoint = 10000")
    conn.execute("PRAGMA cache_size = -65536")


def _store_parts(
    conn: Connection, parts: list[ReadRun], meta: MetaSource, summary: ImportSummary
) -> None:
    for part in parts:
        new, written = _store_run(conn, part, meta)
        summary.attempts += written
        summary._count(part.run_id, new=new)


def _store_run(conn: Connection, part: ReadRun, meta: MetaSource) -> tuple[bool, int]:
    """One run of one source, in one transaction: (whether the run is new, attempts written)."""
    run_id = part.run_id
    with transaction(conn):
        conn.lock_run(run_id)  # another import of this run waits until this one commits
        held = conn.execute(
            'SELECT "commit", branch, runner, platform, started, ended FROM runs WHERE run_id = ?',
            (run_id,),
        ).fetchone()
        phases = RunPhases(
            conn.execute(
                "SELECT phase, source, starts, ends, returncode, duration_s FROM run_phases "
                "WHERE run_id = ?",
                (run_id,),
            )
        )
        phases.merge(record_key(part.first), part.shape.phases)
        if not phases.complete:
            part = part.incomplete()
        _upsert_run(conn, run_id, held, part, phases, meta)
        conn.executemany(_UPSERT_PHASE, phases.rows(run_id))
        shaped = part.shaped if held is None else winning_attempts(conn, run_id, part.shaped)
        written = _write_attempts(conn, shaped, new=held is None)
        if held is None:  # a new run: nothing of it is stored, so its rows are loaded whole
            conn.insert_passed_once(run_id, part.passed_once)
            conn.insert_rows("verdicts", VERDICT_COLUMNS, part.other_verdicts)
            suite = part.suite
        else:
            # Attempts of other sources were stored under the run's earlier completeness.
            conn.execute(_RECAUSE, (phases.complete, run_id))
            conn.execute("DELETE FROM verdicts WHERE run_id = ?", (run_id,))
            verdicts = verdict_rows(run_id, conn.execute(_READ_BACK, (run_id,)))
            conn.executemany(INSERT_VERDICT, verdicts)
            suite = suite_of(row[1] for row in verdicts)
        record_suite(conn, run_id, suite)
        if part.shape.shadow is not None:  # a shadow run: what its selection would have run
            keep_shadow_decision(conn, run_id, part.shape.shadow)
    return held is None, written


def _write_attempts(
    conn: Connection, shaped: dict[str, list[tuple[Any, ...]]], *, new: bool
) -> int:
    """The part's attempts: loaded whole into a new run, upserted into one stored before."""
    written = 0
    for shape, rows in shaped.items():
        if not rows:
            continue
        if new:
            written += conn.insert_rows("attempts", SHAPES[shape], rows)
        else:
            written += max(conn.executemany(UPSERT_ATTEMPT[shape], rows).rowcount, 0)
    return written


def _upsert_run(
    conn: Connection,
    run_id: str,
    held: tuple[Any, ...] | None,
    part: ReadRun,
    phases: RunPhases,
    meta: MetaSource,
) -> None:
    commit, branch, runner, platform, started, ended = held or (None,) * 6
    where = meta.merged(RunMeta(commit, branch, runner))
    shape = part.shape
    times = [t for t in (shape.started, shape.ended, started, ended) if t is not None]
    times += part.tested or ()
    conn.execute(
        _UPSERT_RUN,
        (
            run_id,
            where.commit,
            where.branch,
            where.runner,
            platform or shape.platform,
            min(times, default=None),
            max(times, default=None),
            int(phases.complete),
            phases.exit_code,
            time.time(),
        ),
    )
