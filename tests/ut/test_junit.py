"""JUnit XML of a run: final verdicts agree with the summary; retries keep their history."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
import report_records
from junitparser import Error, Failure, Skipped
from junitparser.xunit2 import JUnitXml, TestCase, TestSuite
from report_records import Record, record, result

from simpler.reporting.junit import (
    CHILDREN_SUITE,
    TESTS_SUITE,
    JUnitUnwritable,
    split_nodeid,
    write_junit,
)
from simpler.reporting.summary import summarize


def child(**fields: Any) -> Record:
    """A child job whose test never reported: only its label names it."""
    return report_records.child(**{"nodeid": None, **fields})


def poison_skip(nodeid: str) -> Record:
    return record("poison_skip", nodeid=nodeid, selector="test_hang", reason="worker poisoned")


def written(tmp_path: Path, records: list[Record]) -> JUnitXml:
    path = tmp_path / "out" / "junit.xml"
    write_junit(records, path)
    # fromfile on the xunit2 class builds xunit2 objects; junitparser annotates the base ones.
    return cast(JUnitXml, JUnitXml.fromfile(str(path)))


def suite(xml: JUnitXml, name: str) -> TestSuite:
    return cast(TestSuite, next(s for s in xml if s.name == name))


def cases(xml: JUnitXml, name: str = TESTS_SUITE) -> dict[str, TestCase]:
    return {f"{case.classname}::{case.name}": cast(TestCase, case) for case in suite(xml, name)}


A_RUN = [
    result("t.py::test_ok", "passed", duration_s=1.25),
    result("t.py::test_skip", "skipped", message="no card"),
    result("t.py::test_bad", "failed", message="AssertionError: 1 != 2", tail="trace 1"),
    result("t.py::test_bad", "failed", phase="retry", attempt=2, message="again", tail="trace 2"),
    result("t.py::test_flaky", "failed", message="first try", tail="flaky trace"),
    result("t.py::test_flaky", "flaky", phase="retry", attempt=2),
    poison_skip("t.py::test_victim"),
    result("t.py::test_victim", "poison_skipped"),
    result("t.py::test_victim", "recovered", phase="retry", attempt=2),
    poison_skip("t.py::test_never"),
    result("t.py::test_setup", "error", message="fixture broke"),
]


def test_counts_match_the_final_verdicts(tmp_path: Path) -> None:
    xml = written(tmp_path, A_RUN)
    tests = suite(xml, TESTS_SUITE)
    assert (tests.tests, tests.failures, tests.errors, tests.skipped) == (7, 2, 1, 1)
    assert (xml.tests, xml.failures, xml.errors) == (7, 2, 1)
    assert len(summarize(A_RUN).failures) == tests.failures + tests.errors


def test_a_flaky_test_passes_with_a_flaky_failure_for_its_failed_attempt(tmp_path: Path) -> None:
    flaky = cases(written(tmp_path, A_RUN))["t.py::test_flaky"]
    assert flaky.is_passed
    (attempt,) = flaky.flaky_failures()
    assert attempt.message == "first try"
    assert attempt.stack_trace == "flaky trace"
    assert flaky.rerun_failures() == []


def test_a_consistent_failure_keeps_its_earlier_attempt_as_a_rerun_failure(
    tmp_path: Path,
) -> None:
    bad = cases(written(tmp_path, A_RUN))["t.py::test_bad"]
    (final,) = bad.result
    assert isinstance(final, Failure)
    assert (final.message, final.text) == ("again", "trace 2")
    (earlier,) = bad.rerun_failures()
    assert (earlier.message, earlier.stack_trace) == ("AssertionError: 1 != 2", "trace 1")
    assert bad.flaky_failures() == []


def test_a_recovered_victim_passes_and_says_it_was_recovered(tmp_path: Path) -> None:
    victim = cases(written(tmp_path, A_RUN))["t.py::test_victim"]
    assert victim.is_passed
    assert victim.interim_result == []
    assert "re-run in a fresh process" in (victim.system_out or "")
    assert "l2 attempt 1: poison_skipped; retry attempt 2: recovered" in (victim.system_out or "")


def test_never_re_run_is_a_failure_skipped_is_skipped_error_is_error(tmp_path: Path) -> None:
    by_id = cases(written(tmp_path, A_RUN))
    (never,) = by_id["t.py::test_never"].result
    assert isinstance(never, Failure)
    assert never.message == "poison_skipped and never re-run: worker poisoned"
    (skipped,) = by_id["t.py::test_skip"].result
    assert isinstance(skipped, Skipped) and skipped.message == "no card"
    (error,) = by_id["t.py::test_setup"].result
    assert isinstance(error, Error) and error.message == "fixture broke"
    assert by_id["t.py::test_ok"].is_passed
    assert by_id["t.py::test_ok"].time == 1.25


def test_children_have_their_own_suite_and_name_how_they_ended(tmp_path: Path) -> None:
    records = [
        child(label="fine"),
        child(label="seg", returncode=None, signal="SIGSEGV", tail="Fatal Python error"),
        child(label="hung", returncode=None, signal="SIGKILL", timed_out=True, duration_s=30.0),
        child(label="early", returncode=1, reached_summary=False),
        child(label="seg", returncode=None, signal="SIGSEGV", tail="Fatal Python error"),
    ]
    xml = written(tmp_path, records)
    children = suite(xml, CHILDREN_SUITE)
    assert (children.tests, children.failures) == (4, 3)
    by_label = {case.name: case for case in children}
    assert by_label["fine"].is_passed and by_label["fine"].time == 1.0
    (seg,) = by_label["seg"].result
    assert (seg.message, seg.type, seg.text) == (
        "killed by SIGSEGV",
        "signal",
        "Fatal Python error",
    )
    assert by_label["hung"].result[0].message.startswith("timed out after 30.0 s")
    assert "crashed before pytest's summary line" in by_label["early"].result[0].message
    assert "devices 4,5" in (by_label["fine"].system_out or "")


def test_a_failed_child_whose_test_recovered_later_is_not_a_failure(tmp_path: Path) -> None:
    nodeid = "t.py::test_two_cards"
    records = [
        child(returncode=1, nodeid=nodeid),
        result(nodeid, "failed", phase="resource"),
        result(nodeid, "flaky", phase="retry", attempt=2),
    ]
    assert summarize(records).failures == []
    children = suite(written(tmp_path, records), CHILDREN_SUITE)
    (case,) = [cast(TestCase, case) for case in children]
    assert case.is_passed
    (history,) = case.flaky_failures()
    assert history.message == "rc=1; its test then flaky"


def test_no_children_means_no_children_suite(tmp_path: Path) -> None:
    xml = written(tmp_path, [result("t.py::test_ok", "passed")])
    assert [s.name for s in xml] == [TESTS_SUITE]


def test_node_ids_split_into_classname_and_name() -> None:
    assert split_nodeid("tests/a.py::TestX::test_y") == ("tests/a.py::TestX", "test_y")
    assert split_nodeid("tests/a.py::test_p[x::y]") == ("tests/a.py", "test_p[x::y]")
    assert split_nodeid("weird") == ("", "weird")


def test_control_characters_and_colour_in_output_still_parse(tmp_path: Path) -> None:
    tail = "\x1b[31mred\x1b[0m \x00\x07 bell"
    xml = written(tmp_path, [result("t.py::test_x", "failed", message="m\x1b[1m", tail=tail)])
    (failure,) = cases(xml)["t.py::test_x"].result
    assert failure.text == "red \ufffd\ufffd bell"
    assert failure.message == "m"


def test_an_unwritable_path_raises_one_line_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    for path in (blocker / "sub" / "junit.xml", tmp_path):  # a folder under a file; a folder
        with pytest.raises(JUnitUnwritable) as raised:
            write_junit(A_RUN, path)
        assert isinstance(raised.value, OSError)
        assert str(path) in str(raised.value)
        assert "\n" not in str(raised.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]  # no temporary left behind


def test_an_existing_file_is_replaced_whole(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text("old")
    write_junit([result("t.py::test_ok", "passed")], path)
    assert JUnitXml.fromfile(str(path)).tests == 1
    assert path.stat().st_mode & 0o644 == 0o644
