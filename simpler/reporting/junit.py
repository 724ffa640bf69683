"""JUnit XML of a whole run, as ``pytest --junitxml`` would name it: every test over all phases.

Report records in, one XML file out: each test's outcome is its final verdict
(``simpler.reporting.verdicts``), earlier attempts are ``flakyFailure``/``rerunFailure``
elements, and each ``<testsuite>`` follows the Surefire 3.0 schema (docs/running.md, "The
JUnit file").
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path

from junitparser import Error, Failure, Skipped
from junitparser.junitparser import Element, FinalResult, SystemOut
from junitparser.junitparser import TestCase as BaseTestCase
from junitparser.xunit2 import (
    FlakyError,
    FlakyFailure,
    InterimResult,
    JUnitXml,
    RerunError,
    RerunFailure,
    TestCase,
    TestSuite,
)

from simpler.base.atomic_write import write_atomically
from simpler.base.compat import UTC
from simpler.contract import (
    FAILED_OUTCOMES,
    GREEN_OUTCOMES,
    PASSING_OUTCOMES,
    phase_rank,
    strip_ansi,
)
from simpler.reporting.records import ChildRecord, PoisonSkipRecord, Record, TestRecord
from simpler.reporting.resource_block import (
    child_failed,
    describe_exit,
    devices_text,
    latest_children,
)
from simpler.reporting.verdicts import Verdict, decide_verdicts

__all__ = ["TESTS_SUITE", "JUnitUnwritable", "build_junit", "pytest_names", "write_junit"]

TESTS_SUITE = "tests"
# XML 1.0 cannot carry most control characters at all, escaped or not; test output can.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# What pytest's bin_xml_escape writes as ``#xNN`` in a test's name (DEL included).
_NOT_IN_PYTEST_NAME = re.compile(
    "[^\u0009\u000a\u000d\u0020-\u007e\u0080-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)
# A testcase's children in the order the Surefire 3.0 schema's sequence requires.
_SCHEMA_ORDER = (
    "failure",
    "rerunFailure",
    "flakyFailure",
    "skipped",
    "error",
    "rerunError",
    "flakyError",
    "system-out",
    "system-err",
)


class JUnitUnwritable(OSError):
    """The JUnit file cannot be written; the message is one line naming the path."""


def write_junit(records: Sequence[Record], path: str | os.PathLike[str]) -> None:
    """Write the run's JUnit XML to ``path``, creating its folder; JUnitUnwritable if not.

    The file is written beside its final name and renamed into place, so a reader never
    sees half a file, and a failed write leaves an earlier file intact.
    """
    target = Path(path)
    xml = build_junit(records)
    try:
        write_atomically(target, xml.write)
    except OSError as error:
        reason = error.strerror or str(error)
        raise JUnitUnwritable(f"cannot write JUnit XML to {target}: {reason}") from None


def build_junit(records: Sequence[Record]) -> JUnitXml:
    """The JUnit document for ``records``: one suite, a testcase per test (or lone child)."""
    xml = JUnitXml()
    verdicts = decide_verdicts(records)
    children = latest_children(r for r in records if isinstance(r, ChildRecord))
    xml.add_testsuite(_tests_suite(records, verdicts, children))
    xml.update_statistics()  # type: ignore[no-untyped-call]  # junitparser leaves it untyped
    for element in (xml, *xml):
        _set_time(element, float(element.time or 0.0))
    return xml


def pytest_names(nodeid: str) -> tuple[str, str]:
    """``(classname, name)`` as ``pytest --junitxml`` writes them for ``nodeid``.

    ``tests/st/test_a.py::TestX::test_y[p]`` is ``("tests.st.test_a.TestX", "test_y[p]")``:
    the path without ``.py`` and with ``/`` as ``.``, then the classes; the name keeps its
    parameters, and ``::`` inside them splits nothing (pytest's ``mangle_test_address``).
    """
    path, sep, tail = nodeid.partition("::")
    if not sep:  # no test inside: the whole id is a path, brackets and all
        names = [path]
    else:
        name_part, bracket, params = tail.partition("[")
        names = [path, *name_part.split("::")]
        if bracket:
            names[-1] += f"[{params.removesuffix(']')}]"
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    name = _NOT_IN_PYTEST_NAME.sub(lambda m: _pytest_escape(m.group()), names[-1])
    return _clean(".".join(names[:-1])), name


def _pytest_escape(char: str) -> str:
    code = ord(char)
    return f"#x{code:02X}" if code <= 0xFF else f"#x{code:04X}"


# --- tests -------------------------------------------------------------------------------


def _tests_suite(
    records: Sequence[Record], verdicts: dict[str, Verdict], children: list[ChildRecord]
) -> TestSuite:
    attempts = _attempts_by_nodeid(records)
    by_nodeid = {c.nodeid: c for c in children if c.nodeid}
    suite = _suite(TESTS_SUITE, records)
    cases: list[BaseTestCase] = [
        _test_case(verdict, attempts.get(nodeid, []), by_nodeid.get(nodeid))
        for nodeid, verdict in verdicts.items()
    ]
    # A child whose test never reported (it crashed first) is a test all the same.
    cases += [_lone_child_case(c) for c in children if c.nodeid not in verdicts]
    # add_testcases recounts once; add_testcase per case would recount the suite each time.
    suite.add_testcases(cases)
    return suite


def _attempts_by_nodeid(records: Sequence[Record]) -> dict[str, list[TestRecord]]:
    """Every test record per node id, phases in order (as the verdicts were decided)."""
    ranked = sorted(enumerate(records), key=lambda pair: (phase_rank(pair[1].phase), pair[0]))
    attempts: dict[str, list[TestRecord]] = {}
    for _, record in ranked:
        if isinstance(record, TestRecord) and record.nodeid:
            attempts.setdefault(record.nodeid, []).append(record)
    return attempts


def _test_case(verdict: Verdict, attempts: list[TestRecord], child: ChildRecord | None) -> TestCase:
    final = _final_result(verdict)
    interims: list[InterimResult] = []
    interim_kinds = _interim_kinds(verdict.outcome)
    if interim_kinds is not None:
        for record in attempts:
            if record is not verdict.record and record.outcome in FAILED_OUTCOMES:
                interims.append(_interim(record, *interim_kinds))
    facts = _facts(verdict, attempts)
    if child is not None:
        facts += "\n" + _child_facts(child)
        if child_failed(child) and not _child_failure_recorded(child, attempts):
            final, interims = _with_child_failure(verdict, child, final, interims)
    return _case(verdict.nodeid, _duration(verdict.record), final, interims, facts)


def _child_failure_recorded(child: ChildRecord, attempts: list[TestRecord]) -> bool:
    """Whether the child's own test record already says its test failed there."""
    phase = child.phase or "resource"
    return any(r.phase == phase and r.outcome in FAILED_OUTCOMES for r in attempts)


def _with_child_failure(
    verdict: Verdict, child: ChildRecord, final: FinalResult | None, interims: list[InterimResult]
) -> tuple[FinalResult | None, list[InterimResult]]:
    """A failed child its test's records do not tell of, counted as the summary counts it."""
    message = f"{describe_exit(child)}; its test then {verdict.outcome}"
    if verdict.outcome in PASSING_OUTCOMES:  # passed later (or anyway): history, not a verdict
        return final, [*interims, _child_interim(child, message, FlakyFailure)]
    if verdict.green:  # skipped or xfailed, yet its process failed: the summary says failure
        return _with_text(Failure(message, _exit_kind(child)), _tail(child)), interims
    # It failed anyway: the child's failure is an earlier attempt.
    return final, [_child_interim(child, message, RerunFailure), *interims]


def _lone_child_case(child: ChildRecord) -> TestCase:
    """A child whose test left no record: a testcase named as that test would be."""
    final: FinalResult | None = None
    if child_failed(child):
        final = _with_text(Failure(describe_exit(child), _exit_kind(child)), _tail(child))
    address = child.nodeid or child.label or "?"
    facts = "\n".join(
        ["simpler: no test record; " + _child_facts(child), *_quarantine_facts(child)]
    )
    return _case(address, _duration(child), final, [], facts)


def _case(
    nodeid: str,
    duration: float,
    final: FinalResult | None,
    interims: list[InterimResult],
    facts: str,
) -> TestCase:
    classname, name = pytest_names(nodeid)
    case = TestCase(name, classname)
    _set_time(case, duration)
    parts: list[Element] = [*([final] if final is not None else []), *interims]
    parts.append(SystemOut(_clean(facts)))
    # Sorted is stable: attempts keep their order within one kind.
    for part in sorted(parts, key=lambda part: _SCHEMA_ORDER.index(part._elem.tag)):
        case.append(part)  # type: ignore[no-untyped-call]  # junitparser leaves it untyped
    return case


def _final_result(verdict: Verdict) -> FinalResult | None:
    """The testcase's failure, error or skipped element; None when it passed."""
    record, outcome = verdict.record, verdict.outcome
    if outcome in PASSING_OUTCOMES:
        return None
    if outcome == "skipped":  # as pytest writes it: type included, "Skipped: " not
        return Skipped(_message(record).removeprefix("Skipped: ") or "skipped", "pytest.skip")
    if outcome == "xfailed":  # as pytest's own junitxml writes an expected failure
        return Skipped(_xfail_reason(_message(record)), "pytest.xfail")
    if outcome == "xpassed":  # a non-strict XPASS passes in pytest's JUnit too
        return None
    if outcome == "error":
        return _with_text(Error(_message(record) or "error", "error"), _tail(record))
    if outcome == "poison_skipped":  # never ran at all: a failure, as the summary counts it
        reason = _one_line(verdict.skip_reason)
        message = "poison_skipped and never re-run" + (f": {reason}" if reason else "")
        return Failure(message, "poison_skipped")
    # failed, or an outcome this version does not know: never green (see simpler.reporting.verdicts)
    kind = "failed" if outcome == "failed" else f"unknown outcome {outcome!r}"
    return _with_text(Failure(_message(record) or kind, kind), _tail(record))


def _xfail_reason(message: str) -> str:
    reason = message.removeprefix("XFAIL").strip()
    return reason.removeprefix("reason: ")


def _interim_kinds(outcome: str) -> tuple[type[InterimResult], type[InterimResult]] | None:
    """Which elements carry a retried test's earlier failed attempts: (failure, error)."""
    if outcome == "flaky":  # it passed in the end
        return FlakyFailure, FlakyError
    if outcome in GREEN_OUTCOMES:
        # passed, skipped, or recovered: a recovered test was the victim of another test's
        # fault, so what it went through earlier was not its own failure; its system-out
        # says it was recovered and lists its attempts.
        return None
    return RerunFailure, RerunError  # it failed every time


def _interim(
    record: TestRecord, on_failure: type[InterimResult], on_error: type[InterimResult]
) -> InterimResult:
    kind = on_error if record.outcome == "error" else on_failure
    interim = kind(_message(record) or record.outcome, record.outcome or "failed")
    interim.stack_trace = _tail(record)  # the schema requires the element, even empty
    return interim


def _child_interim(child: ChildRecord, message: str, kind: type[InterimResult]) -> InterimResult:
    interim = kind(message, _exit_kind(child))
    interim.stack_trace = _tail(child)
    return interim


def _facts(verdict: Verdict, attempts: list[TestRecord]) -> str:
    """What simpler knows and JUnit has no attribute for: where it ran, how it got here."""
    record = verdict.record
    test = verdict.test  # None: its registration decided
    facts = [f"simpler: {verdict.outcome}", f"phase {verdict.phase or '(none)'}"]
    facts.append(f"attempt {verdict.attempt}")
    placed = (
        ("device", test.device if test else None),
        ("runtime", record.runtime or None),
        ("worker", record.worker or None),
    )
    facts += [f"{key} {value}" for key, value in placed if value is not None]
    if test is not None and test.rc is not None:
        facts.append(f"rc {test.rc}" + (f" at {test.where}" if test.where else ""))
    lines = [", ".join(facts)]
    if verdict.outcome == "recovered":
        lines.append("recovered: re-run in a fresh process after a failure it did not cause")
    lines += _quarantine_facts(record)
    history = [
        f"{r.phase or '?'} attempt {'?' if r.attempt is None else r.attempt}: {r.outcome}"
        for r in attempts
    ]
    if len(history) > 1:
        lines.append("attempts: " + "; ".join(history))
    return "\n".join(lines)


def _quarantine_facts(record: TestRecord | PoisonSkipRecord | ChildRecord) -> list[str]:
    """The JUnit result stays pytest's (a failure is a failure to every JUnit reader); this
    line says why simpler's exit code ignored it."""
    if record.quarantined:
        return ["quarantined: its failure does not change simpler's exit code"]
    if record.quarantine_expired:
        return [f"quarantine expired {record.quarantine_expired}: it gates again"]
    return []


def _child_facts(child: ChildRecord) -> str:
    facts = [f"Resource child {describe_exit(child)}", f"devices {devices_text(child)}"]
    if child.label and child.label != child.nodeid:
        facts.append(f"label {child.label}")
    if child.log:
        facts.append(f"log {child.log}")
    return ", ".join(facts)


def _exit_kind(child: ChildRecord) -> str:
    if child.timed_out:
        return "timeout"
    if child.signal:
        return "signal"
    if child.reached_summary is False:
        return "crash"
    return "returncode"


# --- shared ------------------------------------------------------------------------------


def _suite(name: str, records: Iterable[Record]) -> TestSuite:
    suite = TestSuite(name)  # type: ignore[no-untyped-call]  # junitparser leaves it untyped
    stamps = [ts for ts in (r.ts for r in records) if ts is not None and ts > 0]
    if stamps:
        suite.timestamp = datetime.fromtimestamp(min(stamps), UTC).isoformat(timespec="seconds")
    return suite


def _set_time(element: Element, seconds: float) -> None:
    """``time`` as pytest writes it, three decimals: the most the Surefire schema allows."""
    element._elem.set("time", f"{seconds:.3f}")


def _with_text(result: FinalResult, text: str) -> FinalResult:
    if text:
        result.text = text
    return result


def _message(record: TestRecord | PoisonSkipRecord) -> str:
    if not isinstance(record, TestRecord):
        return ""  # a registration has a reason, no message
    message = _one_line(record.message)
    if record.rc is not None and f"{record.rc}" not in message:
        where = f" at {record.where}" if record.where else ""
        message += f" (rc {record.rc}{where})"
    return message.strip()


def _tail(record: Record) -> str:
    return _clean(record.tail).rstrip() if isinstance(record, TestRecord | ChildRecord) else ""


def _one_line(text: str) -> str:
    return " ".join(_clean(text).split())


def _clean(text: str) -> str:
    """Text XML can carry: colour codes dropped, other forbidden characters made visible."""
    return _NOT_XML.sub("\ufffd", strip_ansi(text))


def _duration(record: Record) -> float:
    value = record.duration_s if isinstance(record, TestRecord | ChildRecord) else None
    return value if value is not None and value >= 0 else 0.0
