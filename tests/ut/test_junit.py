"""JUnit XML of a run: final verdicts agree with the summary; retries keep their history."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, cast

import pytest
import report_records
from junitparser import Error, Failure, Skipped
from junitparser.xunit2 import JUnitXml, TestCase, TestSuite
from report_records import Record, record, result
from surefire_schema import surefire_violations

from simpler.reporting.junit import TESTS_SUITE, JUnitUnwritable, pytest_names, write_junit
from simpler.reporting.summary import summarize


def child(**fields: Any) -> Record:
    """A child job whose test never reported: only its label names it."""
    return report_records.child(**{"nodeid": None, **fields})


def poison_skip(nodeid: str) -> Record:
    return record("poison_skip", nodeid=nodeid, selector="test_hang", reason="worker poisoned")


def written(tmp_path: Path, records: list[Record]) -> JUnitXml:
    path = tmp_path / "out" / "junit.xml"
    write_junit(records, path)
    assert surefire_violations(path) == []
    # fromfile on the xunit2 class builds xunit2 objects; junitparser annotates the base ones.
    return cast(JUnitXml, JUnitXml.fromfile(str(path)))


def suite(xml: JUnitXml, name: str) -> TestSuite:
    return cast(TestSuite, next(s for s in xml if s.name == name))


def cases(xml: JUnitXml) -> dict[str, TestCase]:
    """The testcases by ``classname.name``, as pytest names them: ``t.test_ok``."""
    return {
        f"{case.classname}.{case.name}": cast(TestCase, case) for case in suite(xml, TESTS_SUITE)
    }


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
    flaky = cases(written(tmp_path, A_RUN))["t.test_flaky"]
    assert flaky.is_passed
    (attempt,) = flaky.flaky_failures()
    assert attempt.message == "first try"
    assert attempt.stack_trace == "flaky trace"
    assert flaky.rerun_failures() == []


def test_a_consistent_failure_keeps_its_earlier_attempt_as_a_rerun_failure(
    tmp_path: Path,
) -> None:
    bad = cases(written(tmp_path, A_RUN))["t.test_bad"]
    (final,) = bad.result
    assert isinstance(final, Failure)
    assert (final.message, final.text) == ("again", "trace 2")
    (earlier,) = bad.rerun_failures()
    assert (earlier.message, earlier.stack_trace) == ("AssertionError: 1 != 2", "trace 1")
    assert bad.flaky_failures() == []


def test_a_recovered_victim_passes_and_says_it_was_recovered(tmp_path: Path) -> None:
    victim = cases(written(tmp_path, A_RUN))["t.test_victim"]
    assert victim.is_passed
    assert victim.interim_result == []
    assert "re-run in a fresh process" in (victim.system_out or "")
    assert "l2 attempt 1: poison_skipped; retry attempt 2: recovered" in (victim.system_out or "")


def test_never_re_run_is_a_failure_skipped_is_skipped_error_is_error(tmp_path: Path) -> None:
    by_id = cases(written(tmp_path, A_RUN))
    (never,) = by_id["t.test_never"].result
    assert isinstance(never, Failure)
    assert never.message == "poison_skipped and never re-run: worker poisoned"
    (skipped,) = by_id["t.test_skip"].result
    assert isinstance(skipped, Skipped) and skipped.message == "no card"
    (error,) = by_id["t.test_setup"].result
    assert isinstance(error, Error) and error.message == "fixture broke"
    assert by_id["t.test_ok"].is_passed
    assert by_id["t.test_ok"].time == 1.25


def test_children_without_a_test_record_are_testcases_named_as_their_tests(
    tmp_path: Path,
) -> None:
    records = [
        child(label="fine"),
        child(label="t.py::TestX::test_seg", returncode=None, signal="SIGSEGV", tail="Fatal"),
        child(label="hung", returncode=None, signal="SIGKILL", timed_out=True, duration_s=30.0),
        child(label="early", returncode=1, reached_summary=False),
        child(label="t.py::TestX::test_seg", returncode=None, signal="SIGSEGV", tail="Fatal"),
    ]
    xml = written(tmp_path, records)
    assert [s.name for s in xml] == [TESTS_SUITE]  # no pseudo-suite, no pseudo-class
    tests = suite(xml, TESTS_SUITE)
    assert (tests.tests, tests.failures) == (4, 3)
    by_name = cases(xml)
    assert sorted(by_name) == [".early", ".fine", ".hung", "t.TestX.test_seg"]
    assert by_name[".fine"].is_passed and by_name[".fine"].time == 1.0
    (seg,) = by_name["t.TestX.test_seg"].result
    assert (seg.message, seg.type, seg.text) == ("killed by SIGSEGV", "signal", "Fatal")
    assert by_name[".hung"].result[0].message.startswith("timed out after 30.0 s")
    assert "crashed before pytest's summary line" in by_name[".early"].result[0].message
    assert "devices 4,5" in (by_name[".fine"].system_out or "")


def test_a_child_that_crashed_before_its_test_reported_is_that_test(tmp_path: Path) -> None:
    nodeid = "tests/st/test_m.py::TestCards::test_two[2-cards]"
    records = [child(nodeid=nodeid, returncode=None, signal="SIGSEGV", reached_summary=False)]
    (case,) = list(suite(written(tmp_path, records), TESTS_SUITE))
    assert (case.classname, case.name) == ("tests.st.test_m.TestCards", "test_two[2-cards]")
    (crash,) = case.result
    assert isinstance(crash, Failure) and crash.type == "signal"
    assert len(summarize(records).failures) == 1


def test_a_child_s_failure_joins_its_test_s_testcase(tmp_path: Path) -> None:
    nodeid = "t.py::test_two_cards"
    crashed = child(returncode=None, signal="SIGSEGV", nodeid=nodeid, tail="segv trace")
    # Its test then failed on retry: the crash is an earlier attempt, one testcase in all.
    records = [crashed, result(nodeid, "failed", phase="retry", attempt=2, message="again")]
    (case,) = list(suite(written(tmp_path, records), TESTS_SUITE))
    (final,) = case.result
    assert isinstance(final, Failure) and final.message == "again"
    (earlier,) = case.rerun_failures()
    assert (earlier.message, earlier.type) == ("killed by SIGSEGV; its test then failed", "signal")
    assert earlier.stack_trace == "segv trace"
    assert "devices 4,5" in (case.system_out or "")
    # Its test skipped, yet the child failed: a failure, as the summary counts it.
    records = [child(returncode=1, nodeid=nodeid), result(nodeid, "skipped", phase="resource")]
    (case,) = list(suite(written(tmp_path, records), TESTS_SUITE))
    (final,) = case.result
    assert isinstance(final, Failure) and final.message == "rc=1; its test then skipped"
    assert len(summarize(records).failures) == 1
    # Its test failed in the child itself: that record tells it, nothing is added.
    records = [child(returncode=1, nodeid=nodeid), result(nodeid, "failed", phase="resource")]
    (case,) = list(suite(written(tmp_path, records), TESTS_SUITE))
    assert len(case.result) == 1 and case.interim_result == []


def test_a_failed_child_whose_test_recovered_later_is_not_a_failure(tmp_path: Path) -> None:
    nodeid = "t.py::test_two_cards"
    records = [
        child(returncode=1, nodeid=nodeid),
        result(nodeid, "failed", phase="resource"),
        result(nodeid, "flaky", phase="retry", attempt=2),
    ]
    assert summarize(records).failures == []
    (case,) = list(suite(written(tmp_path, records), TESTS_SUITE))
    assert case.is_passed
    (history,) = case.flaky_failures()  # the failed record, not the child again
    assert history.type == "failed"
    # A child that failed after its test passed, with no failed record of its own.
    records = [child(returncode=1, nodeid=nodeid), result(nodeid, "passed", phase="resource")]
    assert summarize(records).failures == []
    (case,) = list(suite(written(tmp_path, records), TESTS_SUITE))
    assert case.is_passed
    (history,) = case.flaky_failures()
    assert history.message == "rc=1; its test then passed"


def test_results_follow_the_schema_s_order_whatever_order_they_happened_in(
    tmp_path: Path,
) -> None:
    nodeid = "t.py::test_setup_later"
    records = [
        result(nodeid, "failed", message="first", tail="t1"),
        result(nodeid, "error", phase="retry", attempt=2, message="then setup", tail="t2"),
        result(nodeid, "error", phase="retry", attempt=3, message="last", tail="t3"),
    ]
    written(tmp_path, records)  # valid: rerunFailure before error, rerunError after it
    case = ET.parse(tmp_path / "out" / "junit.xml").getroot().find("testsuite/testcase")
    assert case is not None
    assert [child.tag for child in case] == ["rerunFailure", "error", "rerunError", "system-out"]
    assert [child.findtext("stackTrace") for child in case if child.tag.startswith("rerun")] == [
        "t1",
        "t2",
    ]


def test_no_children_means_only_tests(tmp_path: Path) -> None:
    xml = written(tmp_path, [result("t.py::test_ok", "passed")])
    assert [s.name for s in xml] == [TESTS_SUITE]
    assert len(list(suite(xml, TESTS_SUITE))) == 1


@pytest.mark.skipif(
    tuple(pytest.version_tuple[:2]) < (9, 2),
    reason="the reference is pytest 9.2's own junitxml naming; older ones name some ids "
    f"otherwise (this is pytest {pytest.__version__})",
)
@pytest.mark.parametrize(
    "nodeid",
    [
        "tests/a.py::TestX::test_y",
        "tests/a.py::TestX::TestInner::test_y[1-2]",
        "tests/a.py::test_p[x::y]",
        "tests/a.py::test_p[[1]]",
        "tests/a.py::test_p[a.b/c]",
        "tests/a.py::test_p[\x07bell\x7f\ufffe]",
        "tests/sub.py/test_b.py::test_z",
        "tests/test[1].py::test_z",
        "tests/a.pyx::test_z",
        "tests/a.py",
        "weird",
    ],
)
def test_node_ids_are_named_as_pytest_names_them(nodeid: str) -> None:
    from _pytest.junitxml import bin_xml_escape, mangle_test_address

    names = mangle_test_address(nodeid)
    assert pytest_names(nodeid) == (".".join(names[:-1]), bin_xml_escape(names[-1]))


def test_names_carry_pytest_s_escapes_and_times_three_decimals(tmp_path: Path) -> None:
    records = [
        result("d/t.py::test_p[\x1b\x7f]", "passed", duration_s=1.23456789),
        result("d/t.py::TestQ::test_q", "passed"),
    ]
    xml = written(tmp_path, records)
    assert sorted(cases(xml)) == ["d.t.TestQ.test_q", "d.t.test_p[#x1B#x7F]"]
    text = (tmp_path / "out" / "junit.xml").read_text()
    assert 'time="1.235"' in text and 'time="0.500"' in text and 'time="1.735"' in text


def test_times_with_more_than_three_decimals_break_the_schema(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    write_junit([result("t.py::test_ok", "passed", duration_s=1.5)], path)
    assert surefire_violations(path) == []
    path.write_text(path.read_text().replace('time="1.500"', 'time="1.500001"'))
    assert surefire_violations(path)


def test_control_characters_and_colour_in_output_still_parse(tmp_path: Path) -> None:
    tail = "\x1b[31mred\x1b[0m \x00\x07 bell"
    xml = written(tmp_path, [result("t.py::test_x", "failed", message="m\x1b[1m", tail=tail)])
    (failure,) = cases(xml)["t.test_x"].result
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
