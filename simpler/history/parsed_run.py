"""One run's records from one source (a report file), as the reader hands them to the writer.

:class:`RunPart` collects the records, attributing each failure as it streams past;
:meth:`RunPart.finish` makes a :class:`ReadRun`: attempt rows sorted in the table's key
order and split by the columns they fill, and verdicts as if the report were complete. The
writer redoes causes and verdicts only when the run is incomplete or has other parts stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from simpler.history.attribution import INFRA, Attempt, RunAttribution
from simpler.history.run_meta import RunShape
from simpler.history.suites import Suite, suite_of
from simpler.history.verdict_rows import ATTEMPT_COLUMNS, verdict_rows
from simpler.reporting.records import TestRecord, from_dict

__all__ = ["SHAPES", "ReadRun", "RunPart", "shape_rows"]

Row = tuple[Any, ...]
# Attempts are written in three shapes: binding a None costs sqlite3 a failed adapter lookup,
# twice the cost of binding a value, and most attempts (passed, on a pooled worker or on
# none) leave Attempt's last columns empty; a column an insert leaves out is NULL all the same.
SHAPES = {
    "full": Attempt._fields,
    "placed": Attempt._fields[:10],
    "plain": Attempt._fields[:6] + Attempt._fields[8:10],  # no device, no runtime
}
# The verdict of most tests in most runs, passed at its one attempt: only its node id is
# sent; each store writes such verdicts its fastest way (Connection.insert_passed_once).
_PASSED_ONCE = ("passed", 1, None, 0)
_EMPTY_TAIL = (None,) * (len(Attempt._fields) - 10)
# The attempts table's key order (the run id is one): written in it, each row lands after the
# one before, in full pages and fewer of them to write at the commit.
_PRIMARY_KEY = itemgetter(1, 3, 2)  # nodeid, phase, attempt
_VERDICT_FIELDS = itemgetter(*(Attempt._fields.index(name) for name in ATTEMPT_COLUMNS))
_TS = Attempt._fields.index("ts")
_CAUSE = Attempt._fields.index("cause")
_OWN_CAUSE = Attempt._fields.index("own_cause")


@dataclass(frozen=True)
class ReadRun:
    run_id: str
    first: dict[str, Any]  # names the source: the same in every copy of the file
    shape: RunShape
    shaped: dict[str, list[Row]]  # SHAPES' rows, in key order, causes as if complete
    passed_once: list[str]  # the tests that passed at their one attempt (not quarantined)
    other_verdicts: list[Row]  # every other verdict_rows row
    tested: tuple[float, float] | None  # the first and last attempt's record time
    suite: Suite  # its tests, named here in the reader, off the writer's path

    def rows(self) -> list[Row]:
        """Every attempt with all of Attempt's fields, in key order (the slow way back)."""
        plain = [(*r[:6], None, None, *r[6:8], *_EMPTY_TAIL) for r in self.shaped["plain"]]
        placed = [(*r, *_EMPTY_TAIL) for r in self.shaped["placed"]]
        return sorted([*self.shaped["full"], *placed, *plain], key=_PRIMARY_KEY)

    def incomplete(self) -> ReadRun:
        """The same run as stored when its report is incomplete: every failure is ``infra``."""
        rows = [
            row if row[_OWN_CAUSE] is None else (*row[:_CAUSE], INFRA, *row[_CAUSE + 1 :])
            for row in self.rows()
        ]
        return _read_run(self.run_id, self.first, self.shape, rows)


class RunPart:
    """One run's records in one source, attributed as they stream past."""

    __slots__ = ("attribution", "first", "shape", "test")

    def __init__(self, run_id: str, first: dict[str, Any]) -> None:
        self.attribution = RunAttribution(run_id)
        self.shape = RunShape()
        self.first = first
        self.test = self.attribution.test  # a test record's whole way in, looked up once

    def add(self, record: dict[str, Any]) -> None:
        typed = from_dict(record)
        if isinstance(typed, TestRecord):
            self.attribution.test(record)  # its time reaches the run through its attempt
        else:
            self.attribution.other(typed)
            self.shape.add(typed)

    def other(self, record: dict[str, Any]) -> None:
        """Any record but a test's: typed here, where records are few (a test's stays a dict:
        a long history holds a million, and the import reads their fields by position)."""
        typed = from_dict(record)
        self.attribution.other(typed)
        self.shape.add(typed)

    def finish(self) -> ReadRun:
        rows = sorted(self.attribution.attempts(complete=True), key=_PRIMARY_KEY)
        return _read_run(self.attribution.run_id, self.first, self.shape, rows)


def shape_rows(rows: Sequence[Row]) -> dict[str, list[Row]]:
    """Attempt rows split by SHAPES, each keeping the rows' order."""
    full: list[Row] = []
    placed: list[Row] = []
    plain: list[Row] = []
    for row in rows:  # the hot path of a large import: by position, in Attempt's order
        if row[10:] != _EMPTY_TAIL:
            full.append(tuple(row))
        elif row[6] is not None and row[7] is not None:
            placed.append(row[:10])
        elif row[6] is None and row[7] is None:
            plain.append(row[:6] + row[8:10])
        else:
            full.append(tuple(row))
    return {"full": full, "placed": placed, "plain": plain}


def _read_run(run_id: str, first: dict[str, Any], shape: RunShape, rows: Sequence[Row]) -> ReadRun:
    passed_once: list[str] = []
    other: list[Row] = []
    for verdict in verdict_rows(run_id, map(_VERDICT_FIELDS, rows)):
        if verdict[2:] == _PASSED_ONCE:
            passed_once.append(verdict[1])
        else:
            other.append(verdict)
    times = [row[_TS] for row in rows if row[_TS] is not None]
    tested = (min(times), max(times)) if times else None
    tests = suite_of(passed_once + [row[1] for row in other])
    return ReadRun(run_id, first, shape, shape_rows(rows), passed_once, other, tested, tests)
