"""Quarantined tests in the verdict: their failures do not change the exit code, the summary
names them in a block of their own, and an expired entry gates again."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from typing import Any

from junitparser.xunit2 import JUnitXml
from report_records import child, phase_span, record, result

from simpler.ci.quarantine_markup import quarantine_markdown, quarantine_warnings
from simpler.reporting.junit import write_junit
from simpler.reporting.last_screen import LAST_SCREEN
from simpler.reporting.quarantine_file import parse_quarantine
from simpler.reporting.summary import Summary, summarize

BROKEN = "tests/st/test_a.py::TestMatmul::test_large"
OTHER = "tests/st/test_a.py::test_other"
EXPIRY = date.today() + timedelta(days=30)
QUARANTINE = parse_quarantine(
    f'[[quarantine]]\nnodeid = "tests/st/test_a.py::TestMatmul"\nreason = "fails 1 in 12"\n'
    f'issue = "https://example.org/issues/7"\nexpires = {EXPIRY}\n',
    Path("simpler-quarantine.toml"),
)


def last_line(summary: Summary) -> str:
    return summary.text.rstrip("\n").splitlines()[-1]


def tail(summary: Summary) -> str:
    return "\n".join(summary.text.rstrip("\n").splitlines()[-LAST_SCREEN:])


def quarantined_failure(nodeid: str = BROKEN, **fields: Any) -> dict[str, Any]:
    return result(nodeid, "failed", message="AssertionError: golden", quarantined=True, **fields)


def test_a_quarantined_failure_does_not_change_the_exit_code_and_is_named() -> None:
    records = phase_span("l2", result(OTHER, "passed"), quarantined_failure())
    summary = summarize(records, test_quarantine=QUARANTINE)
    assert summary.exit_code == 0
    assert last_line(summary) == (
        "simpler: 1 passed, 0 recovered, 0 flaky, 0 failed, 1 quarantined -> exit 0"
    )
    assert "Quarantined (1): failures here do not change the exit code" in summary.text
    assert (
        f"  {BROKEN}: failed (reason: fails 1 in 12; issue https://example.org/issues/7; "
        f"expires {EXPIRY})"
    ) in summary.text
    assert "Unrecovered failures" not in summary.text
    assert "No unrecovered failures." in summary.text
    assert summary.failures == [] and [f.nodeid for f in summary.quarantined] == [BROKEN]


def test_a_quarantined_pass_is_listed_and_the_verdict_line_keeps_its_format() -> None:
    records = phase_span("l2", result(OTHER, "passed"), result(BROKEN, "passed", quarantined=True))
    summary = summarize(records, test_quarantine=QUARANTINE)
    assert summary.exit_code == 0
    assert last_line(summary) == "simpler: 2 passed, 0 recovered, 0 flaky, 0 failed -> exit 0"
    assert f"  {BROKEN}: passed (reason: fails 1 in 12;" in summary.text


def test_the_block_names_a_test_whose_entry_the_report_cannot_see() -> None:
    summary = summarize(phase_span("l2", quarantined_failure()))  # `simpler report`, no file
    assert f"  {BROKEN}: failed (its entry is not in a quarantine file this report read)" in (
        summary.text
    )


def test_an_expired_entry_gates_again_and_says_so() -> None:
    records = phase_span(
        "l2", result(OTHER, "passed"), result(BROKEN, "failed", quarantine_expired="2026-01-31")
    )
    summary = summarize(records, test_quarantine=QUARANTINE)
    assert summary.exit_code == 1
    assert f"quarantine expired 2026-01-31: {BROKEN} gates again (failed)" in summary.text
    assert "Quarantined (" not in summary.text  # nothing is held back this run
    assert f"  1) {BROKEN}: failed" in tail(summary)
    assert last_line(summary) == "simpler: 1 passed, 0 recovered, 0 flaky, 1 failed -> exit 1"


def test_a_real_failure_beside_a_quarantined_one_is_the_only_one_indexed() -> None:
    records = phase_span("l2", quarantined_failure(), result(OTHER, "failed", message="boom"))
    summary = summarize(records, test_quarantine=QUARANTINE)
    assert summary.exit_code == 1
    screen = tail(summary)
    assert "Unrecovered failures: 1 (details above)" in screen
    assert f"  1) {OTHER}: failed, boom [l2]" in screen
    assert f"{BROKEN}: failed [" not in summary.text  # in the block only, not as a failure
    assert last_line(summary) == (
        "simpler: 0 passed, 0 recovered, 0 flaky, 1 failed, 1 quarantined -> exit 1"
    )


def test_the_final_verdict_decides_a_retried_test_quarantined_only_in_l2() -> None:
    # The retry's record is the verdict: marked there too, or it gates.
    records = [
        *phase_span("l2", quarantined_failure()),
        *phase_span("retry", result(BROKEN, "failed", phase="retry", attempt=2)),
    ]
    assert summarize(records).exit_code == 1


def test_a_quarantined_resource_child_that_crashed_before_its_record_does_not_gate() -> None:
    crashed = child(nodeid=BROKEN, returncode=None, signal="SIGSEGV", quarantined=True)
    records = [
        *phase_span("l2", result(OTHER, "passed")),
        *phase_span("resource", crashed),
    ]
    # The phase went red with it: the child explains it.
    records[-1] = record("phase", "resource", event="end", counts={}, returncode=1, duration_s=1.0)
    summary = summarize(records, test_quarantine=QUARANTINE)
    assert summary.exit_code == 0, summary.text
    assert f"  {BROKEN}: killed by SIGSEGV" in summary.text
    assert "1 quarantined -> exit 0" in last_line(summary)


def test_a_failed_child_of_a_quarantined_test_follows_its_test() -> None:
    records = [
        *phase_span("l2", result(OTHER, "passed")),
        *phase_span(
            "resource",
            quarantined_failure(phase="resource"),
            child(nodeid=BROKEN, returncode=1),  # written without the mark: the verdict decides
        ),
    ]
    assert summarize(records).exit_code == 0


def test_fail_on_flaky_ignores_a_quarantined_flaky_test() -> None:
    records = phase_span("l2", result(BROKEN, "flaky", attempt=2, quarantined=True))
    assert summarize(records, fail_on_flaky=True).exit_code == 0
    records = phase_span("l2", result(BROKEN, "flaky", attempt=2))
    assert summarize(records, fail_on_flaky=True).exit_code == 1


def test_github_gets_a_warning_not_an_error_and_a_short_step_summary_block() -> None:
    expired = result(OTHER, "failed", quarantine_expired="2026-01-31")
    summary = summarize(
        phase_span("l2", quarantined_failure(), expired), test_quarantine=QUARANTINE
    )
    (warning,) = quarantine_warnings(summary)
    assert warning.startswith("::warning title=Quarantined test failed")
    assert BROKEN in warning
    markdown = quarantine_markdown(summary)
    assert "### Quarantined (1): failures here do not change the exit code" in markdown
    assert f"- `{BROKEN}`: **failed**" in markdown
    assert f"quarantine expired 2026-01-31: `{OTHER}` **gates again** (failed)" in markdown
    assert quarantine_markdown(summarize(phase_span("l2", result(OTHER, "passed")))) == ""


def test_junit_keeps_the_failure_and_says_it_was_quarantined(tmp_path: Path) -> None:
    target = tmp_path / "junit.xml"
    write_junit(phase_span("l2", quarantined_failure()), target)
    (case,) = list(next(iter(JUnitXml.fromfile(str(target)))))
    assert [r._tag for r in case.result] == ["failure"]
    assert "quarantined: its failure does not change simpler's exit code" in case.system_out


def test_a_childs_mark_does_not_overrule_its_tests_unmarked_verdict() -> None:
    # The test's own record is what pytest said, in the process that ran it: it decides.
    records = [
        *phase_span("l2", result(OTHER, "passed")),
        *phase_span(
            "resource",
            result(BROKEN, "failed", phase="resource"),
            child(nodeid=BROKEN, returncode=1, quarantined=True),
        ),
    ]
    assert summarize(records).exit_code == 1
