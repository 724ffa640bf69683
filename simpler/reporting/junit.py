"""JUnit XML (xunit2 flavour) of a whole run: every test over all phases, and every child job.

One job: report records in, one XML file out, for CI tools that read JUnit. Each test's
outcome is its final verdict from ``simpler.reporting.verdicts``, so the XML and the summary never
disagree; retried tests carry their earlier attempts as ``flakyFailure`` (passed on retry)
or ``rerunFailure`` (failed every time) elements. Resource-phase child jobs form a suite of
their own, since a child that crashed early leaves no test record to hang its failure on.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from junitparser import Error, Failure, Skipped
from junitparser.junitparser import FinalResult
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

from simpler.contract import GREEN_OUTCOMES, PASSING_OUTCOMES, PHASE_ORDER, strip_ansi
from simpler.reporting.files import write_atomically
from simpler.reporting.report_file import Record
from simpler.reporting.resource_block import (
    child_failed,
    describe_exit,
    devices_text,
    latest_children,
)
from simpler.reporting.verdicts import Verdict, decide_verdicts

__all__ = ["CHILDREN_SUITE", "TESTS_SUITE", "JUnitUnwritable", "build_junit", "write_junit"]

TESTS_SUITE = "tests"
CHILDREN_SUITE = "resource children"
_CHILDREN_CLASSNAME = "resource_children"
_FAILED_ATTEMPTS = ("failed", "error")  # earlier attempts worth an interim element
# XML 1.0 cannot carry most control characters at all, escaped or not; test output can.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


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
    """The JUnit document for ``records``: a tests suite and, if any ran, a children suite."""
    xml = JUnitXml()
    verdicts = decide_verdicts(records)
    xml.add_testsuite(_tests_suite(records, verdicts))
    children = latest_children(r for r in records if r.get("type") == "child")
    if children:
        xml.add_testsuite(_children_suite(children, verdicts))
    xml.update_statistics()  # type: ignore[no-untyped-call]  # junitparser leaves it untyped
    return xml


# --- tests -------------------------------------------------------------------------------


def _tests_suite(records: Sequence[Record], verdicts: dict[str, Verdict]) -> TestSuite:
    attempts = _attempts_by_nodeid(records)
    suite = _suite(TESTS_SUITE, records)
    # add_testcases recounts once; add_testcase per case would recount the suite each time.
    suite.add_testcases(
        [_test_case(verdict, attempts.get(nodeid, [])) for nodeid, verdict in verdicts.items()]
    )
    return suite


def _attempts_by_nodeid(records: Sequence[Record]) -> dict[str, list[Record]]:
    """Every test record per node id, phases in order (as the verdicts were decided)."""
    ranked = sorted(enumerate(records), key=lambda pair: (_phase_rank(pair[1]), pair[0]))
    attempts: dict[str, list[Record]] = {}
    for _, record in ranked:
        if record.get("type") == "test" and record.get("nodeid"):
            attempts.setdefault(str(record["nodeid"]), []).append(record)
    return attempts


def _test_case(verdict: Verdict, attempts: list[Record]) -> TestCase:
    classname, name = split_nodeid(verdict.nodeid)
    case = TestCase(name, classname, _duration(verdict.record))
    final = _final_result(verdict)
    if final is not None:
        case.result = [final]
    interim_kinds = _interim_kinds(verdict.outcome)
    if interim_kinds is not None:
        for record in attempts:
            if record is not verdict.record and record.get("outcome") in _FAILED_ATTEMPTS:
                case.add_interim_result(_interim(record, *interim_kinds))
    case.system_out = _clean(_facts(verdict, attempts))
    return case


def _final_result(verdict: Verdict) -> FinalResult | None:
    """The testcase's failure, error or skipped element; None when it passed."""
    record, outcome = verdict.record, verdict.outcome
    if outcome in PASSING_OUTCOMES:
        return None
    if outcome == "skipped":
        return Skipped(_message(record) or "skipped")
    if outcome == "xfailed":  # as pytest's own junitxml writes an expected failure
        return Skipped(_xfail_reason(_message(record)), "pytest.xfail")
    if outcome == "xpassed":  # a non-strict XPASS passes in pytest's JUnit too
        return None
    if outcome == "error":
        return _with_text(Error(_message(record) or "error", "error"), _tail(record))
    if outcome == "poison_skipped":  # never ran at all: a failure, as the summary counts it
        registration = verdict.registration or record
        reason = _one_line(str(registration.get("reason") or record.get("message") or ""))
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


def split_nodeid(nodeid: str) -> tuple[str, str]:
    """``("tests/st/test_a.py::TestX", "test_y[p]")`` for ``tests/st/test_a.py::TestX::test_y[p]``.

    A parameter id may itself hold ``::``; only the part before its ``[`` is split.
    """
    bracket = nodeid.find("[")
    head = nodeid if bracket < 0 else nodeid[:bracket]
    cut = head.rfind("::")
    if cut < 0:
        return "", nodeid
    return nodeid[:cut], nodeid[cut + 2 :]


def _interim(
    record: Record, on_failure: type[InterimResult], on_error: type[InterimResult]
) -> InterimResult:
    kind = on_error if record.get("outcome") == "error" else on_failure
    interim = kind(
        _message(record) or str(record.get("outcome")), str(record.get("outcome") or "failed")
    )
    tail = _tail(record)
    if tail:
        interim.stack_trace = tail
    return interim


def _facts(verdict: Verdict, attempts: list[Record]) -> str:
    """What simpler knows and JUnit has no attribute for: where it ran, how it got here."""
    record = verdict.record
    facts = [f"simpler: {verdict.outcome}", f"phase {verdict.phase or '(none)'}"]
    facts.append(f"attempt {verdict.attempt}")
    facts += [
        f"{key} {record[key]}"
        for key in ("device", "runtime", "worker")
        if record.get(key) is not None
    ]
    if record.get("rc") is not None:
        facts.append(
            f"rc {record['rc']}" + (f" at {record['where']}" if record.get("where") else "")
        )
    lines = [", ".join(facts)]
    if verdict.outcome == "recovered":
        lines.append("recovered: re-run in a fresh process after a failure it did not cause")
    history = [
        f"{r.get('phase') or '?'} attempt {r.get('attempt', '?')}: {r.get('outcome')}"
        for r in attempts
    ]
    if len(history) > 1:
        lines.append("attempts: " + "; ".join(history))
    return "\n".join(lines)


# --- children ----------------------------------------------------------------------------


def _children_suite(children: list[Record], verdicts: dict[str, Verdict]) -> TestSuite:
    suite = _suite(CHILDREN_SUITE, children)
    suite.add_testcases([_child_case(child, verdicts) for child in children])
    return suite


def _child_case(child: Record, verdicts: dict[str, Verdict]) -> TestCase:
    case = TestCase(str(child.get("label") or "?"), _CHILDREN_CLASSNAME, _duration(child))
    if child_failed(child):
        message = describe_exit(child)
        verdict = verdicts.get(str(child.get("nodeid") or ""))
        if verdict is not None and verdict.outcome in PASSING_OUTCOMES:
            # Its test passed when re-run later, as the summary counts it: the child's
            # failure is history, not the verdict.
            flaky = FlakyFailure(f"{message}; its test then {verdict.outcome}", _exit_kind(child))
            if _tail(child):
                flaky.stack_trace = _tail(child)
            case.add_interim_result(flaky)
        else:
            case.result = [_with_text(Failure(message, _exit_kind(child)), _tail(child))]
    facts = [f"devices {devices_text(child)}"]
    facts += [f"{key} {child[key]}" for key in ("nodeid", "log") if child.get(key)]
    case.system_out = _clean(", ".join(facts))
    return case


def _exit_kind(child: Record) -> str:
    if child.get("timed_out"):
        return "timeout"
    if child.get("signal"):
        return "signal"
    if child.get("reached_summary") is False:
        return "crash"
    return "returncode"


# --- shared ------------------------------------------------------------------------------


def _suite(name: str, records: Iterable[Record]) -> TestSuite:
    suite = TestSuite(name)  # type: ignore[no-untyped-call]  # junitparser leaves it untyped
    stamps = [r["ts"] for r in records if isinstance(r.get("ts"), int | float) and r["ts"] > 0]
    if stamps:
        suite.timestamp = datetime.fromtimestamp(min(stamps), UTC).isoformat(timespec="seconds")
    return suite


def _with_text(result: FinalResult, text: str) -> FinalResult:
    if text:
        result.text = text
    return result


def _message(record: Record) -> str:
    message = _one_line(str(record.get("message") or ""))
    if record.get("rc") is not None and f"{record['rc']}" not in message:
        where = f" at {record['where']}" if record.get("where") else ""
        message += f" (rc {record['rc']}{where})"
    return message.strip()


def _tail(record: Record) -> str:
    return _clean(str(record.get("tail") or "")).rstrip()


def _one_line(text: str) -> str:
    return " ".join(_clean(text).split())


def _clean(text: str) -> str:
    """Text XML can carry: colour codes dropped, other forbidden characters made visible."""
    return _NOT_XML.sub("\ufffd", strip_ansi(text))


def _duration(record: Record) -> float:
    value = record.get("duration_s")
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return 0.0


def _phase_rank(record: Record) -> int:
    phase = str(record.get("phase") or "")
    return PHASE_ORDER.index(phase) if phase in PHASE_ORDER else 0
