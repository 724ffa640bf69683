"""Report files into the history database: ``simpler history import`` and ``simpler run --history``.

Each file is read once, line by line, and each of its runs is attributed as it streams
(``attribution.py``): no test record is kept after its line, so a file of a million records
costs the attempts it yields, not its dictionaries. Each run of each file is then stored in
one transaction, so a killed import leaves that run as the database had it.

Storing is idempotent and order-free, so shards and copies of one run merge however they
arrive: an attempt is upserted on its key, the later record (by time) winning; the run's
phases are counted per source (``run_meta.py``) and merged by maximum; the run's verdicts
are recomputed from all of its attempts; and whether the run is complete is decided from
every source stored so far, which turns every failure of an incomplete run into ``infra``
and, once a later import completes it, back into its own cause.
"""

from __future__ import annotations

import gc
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from json import dumps, loads
from json.decoder import JSONDecoder
from json.scanner import make_scanner
from operator import itemgetter
from pathlib import Path
from typing import Any

from simpler.contract import PHASE_ORDER
from simpler.history.attribution import Attempt, RunAttribution
from simpler.history.run_meta import MetaSource, RunMeta, RunPhases, RunShape, record_key
from simpler.reporting.report_file import RECORD_TYPES, ReportUnreadable

__all__ = ["ImportSummary", "NotAReport", "import_records", "import_reports"]

_TYPES = frozenset(RECORD_TYPES)
_scan = make_scanner(JSONDecoder())  # type: ignore[arg-type]  # typeshed: the C scanner
# The final attempt of a test in a run: the latest phase, then the latest record. One
# composite number, so that one max() picks the row (SQLite takes the bare columns from it).
_PHASE_RANK = " ".join(f"WHEN '{name}' THEN {rank}" for rank, name in enumerate(PHASE_ORDER))
_FINAL_ORDER = f"(CASE phase {_PHASE_RANK} ELSE 0 END) * 1e10 + COALESCE(ts, 0)"

# Attempts are written in three shapes: binding a None costs sqlite3 a failed adapter lookup,
# twice the cost of binding a value, and most attempts (passed, on a pooled worker or on
# none) leave Attempt's last columns empty; a column an insert leaves out is NULL all the same.
_SHAPES = {
    "full": Attempt._fields,
    "placed": Attempt._fields[:10],
    "plain": Attempt._fields[:6] + Attempt._fields[8:10],  # no device, no runtime
}
_TS_OF = itemgetter(Attempt._fields.index("ts"))
_EMPTY_TAIL = (None,) * (len(Attempt._fields) - 10)
_ON_CONFLICT = """
ON CONFLICT (run_id, nodeid, phase, attempt) DO UPDATE SET
    outcome = excluded.outcome, duration_s = excluded.duration_s, device = excluded.device,
    runtime = excluded.runtime, rc = excluded.rc, "where" = excluded."where",
    cause = excluded.cause, own_cause = excluded.own_cause,
    quarantined = excluded.quarantined, message = excluded.message,
    label = COALESCE(excluded.label, attempts.label), ts = excluded.ts
WHERE (excluded.outcome = 'poison_skipped' AND attempts.outcome = 'skipped')
   OR (COALESCE(excluded.ts, 0) >= COALESCE(attempts.ts, 0)
       AND NOT (excluded.outcome = 'skipped' AND attempts.outcome = 'poison_skipped'))
"""
_UPSERT_ATTEMPT = {
    shape: "INSERT INTO attempts ({}) VALUES ({}) {}".format(
        ", ".join(f'"{column}"' for column in columns), ", ".join("?" * len(columns)), _ON_CONFLICT
    )
    for shape, columns in _SHAPES.items()
}
_RECOMPUTE_VERDICTS = f"""
INSERT INTO verdicts (run_id, nodeid, outcome, attempts, cause, quarantined)
SELECT run_id, nodeid, outcome, COUNT(*), cause, SUM(quarantined) > 0
FROM attempts WHERE run_id = ? GROUP BY nodeid HAVING MAX({_FINAL_ORDER}) IS NOT NULL
"""
# A run's completeness changed since its attempts were stored: their causes follow it.
_RECAUSE = """
UPDATE attempts SET cause = CASE WHEN ? THEN own_cause ELSE 'infra' END
WHERE run_id = ? AND own_cause IS NOT NULL
"""
_UPSERT_PHASE = """
INSERT OR REPLACE INTO run_phases (run_id, phase, source, starts, ends, returncode)
VALUES (?, ?, ?, ?, ?, ?)
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


class _Part:
    """One run's records in one source, attributed as they stream past."""

    __slots__ = ("attribution", "first", "shape", "test")

    def __init__(self, run_id: str, first: dict[str, Any]) -> None:
        self.attribution = RunAttribution(run_id)
        self.shape = RunShape()
        self.first = first  # names the source: the same in every copy of the file
        self.test = self.attribution.test  # a test record's whole way in, looked up once

    def add(self, record: dict[str, Any]) -> None:
        if record.get("type") == "test":
            self.attribution.test(record)  # its time reaches the run through its attempt
        else:
            self.other(record)

    def other(self, record: dict[str, Any]) -> None:
        self.attribution.other(record)
        self.shape.add(record)


def import_reports(
    conn: sqlite3.Connection,
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
    with _without_cycle_collection():
        for path in paths:
            parts, malformed = _read_report(Path(path), only_run)
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
    conn: sqlite3.Connection,
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
    parts: dict[str, _Part] = {}
    with _without_cycle_collection():
        for record in records:
            if not isinstance(record, dict) or record.get("type") not in _TYPES:
                summary.malformed += 1
                continue
            part = _part_of(parts, record, only_run)
            if part is not None:
                part.add(record)
        _store_parts(conn, parts, MetaSource(commit, branch, runner), summary)
    return summary


def _read_report(path: Path, only_run: str | None) -> tuple[dict[str, _Part], int]:
    parts: dict[str, _Part] = {}
    malformed = records = 0
    # Once the file has shown it is a report, lines that cannot hold the run are not parsed.
    wanted = dumps(only_run) if only_run else None  # the id as the writer encodes it
    last_run: object = None
    part: _Part | None = None
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as stream:
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
                if record["type"] == "test":
                    part.test(record)
                else:
                    part.other(record)
    except OSError as error:
        raise ReportUnreadable(f"cannot read report file {path}: {error.strerror}") from error
    if not records and malformed:
        raise NotAReport(f"{path} is not a simpler report: no line of it is a report record")
    return parts, malformed


def _parse(line: str) -> dict[str, Any] | None:
    """The record on one line, or None for a torn, binary or foreign line (as parse_line).

    json's own C scanner, called directly: ``json.loads`` adds two regular expressions and
    three Python calls to every line, a fifth of the cost of the lines a report is made of.
    """
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


def _part_of(parts: dict[str, _Part], record: dict[str, Any], only_run: str | None) -> _Part | None:
    """The part of the record's run (made on its first record), None for a run not wanted."""
    run = record.get("run")
    run = run if isinstance(run, str) else ""
    part = parts.get(run)
    if part is None:
        if only_run and run != only_run:
            return None
        # No run id (plain pytest, outside simpler run): the file is one run. Its id is its
        # first such record's key, not the file's name or content hash: the same in every
        # copy of the file and as the file grows, so a later import completes that run.
        part = parts[run] = _Part(run or f"file-{record_key(record)}", record)
    return part


def _store_parts(
    conn: sqlite3.Connection, parts: dict[str, _Part], meta: MetaSource, summary: ImportSummary
) -> None:
    # WAL without a sync per commit: a crash of the machine may lose the last runs imported
    # (import them again), never corrupt the database; a sync each run would dominate.
    conn.execute("PRAGMA synchronous = NORMAL")
    for part in parts.values():
        new, written = _store_run(conn, part, meta)
        summary.attempts += written
        summary._count(part.attribution.run_id, new=new)


def _store_run(conn: sqlite3.Connection, part: _Part, meta: MetaSource) -> tuple[bool, int]:
    """One run of one source, in one transaction: (whether the run is new, attempts written)."""
    run_id = part.attribution.run_id
    conn.execute("BEGIN IMMEDIATE")  # the write lock now: a second importer waits its turn
    try:
        held = conn.execute(
            'SELECT "commit", branch, runner, platform, started, ended FROM runs WHERE run_id = ?',
            (run_id,),
        ).fetchone()
        phases = RunPhases(
            conn.execute(
                "SELECT phase, source, starts, ends, returncode FROM run_phases WHERE run_id = ?",
                (run_id,),
            )
        )
        phases.merge(record_key(part.first), part.shape.phases)
        attempts = part.attribution.attempts(complete=phases.complete)
        _upsert_run(conn, run_id, held, part.shape, attempts, phases, meta)
        conn.executemany(_UPSERT_PHASE, phases.rows(run_id))
        written = _write_attempts(conn, attempts)
        if held is not None:
            # Attempts of other sources were stored under the run's earlier completeness.
            conn.execute(_RECAUSE, (phases.complete, run_id))
            conn.execute("DELETE FROM verdicts WHERE run_id = ?", (run_id,))
        conn.execute(_RECOMPUTE_VERDICTS, (run_id,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return held is None, written


def _write_attempts(conn: sqlite3.Connection, attempts: Sequence[Attempt]) -> int:
    full: list[tuple[Any, ...]] = []
    placed: list[tuple[Any, ...]] = []
    plain: list[tuple[Any, ...]] = []
    for row in attempts:  # the hot path of a large import: by position, in Attempt's order
        if row[10:] != _EMPTY_TAIL:
            full.append(row)
        elif row[6] is not None and row[7] is not None:
            placed.append(row[:10])
        elif row[6] is None and row[7] is None:
            plain.append(row[:6] + row[8:10])
        else:
            full.append(row)
    written = 0
    for shape, rows in (("full", full), ("placed", placed), ("plain", plain)):
        if rows:
            written += max(conn.executemany(_UPSERT_ATTEMPT[shape], rows).rowcount, 0)
    return written


def _upsert_run(
    conn: sqlite3.Connection,
    run_id: str,
    held: tuple[Any, ...] | None,
    shape: RunShape,
    attempts: Sequence[Attempt],
    phases: RunPhases,
    meta: MetaSource,
) -> None:
    commit, branch, runner, platform, started, ended = held or (None,) * 6
    where = meta.merged(RunMeta(commit, branch, runner))
    times = [t for t in (shape.started, shape.ended, started, ended) if t is not None]
    tested = [ts for ts in map(_TS_OF, attempts) if ts is not None]
    if tested:
        times += (min(tested), max(tested))
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
