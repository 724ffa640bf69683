"""The last screen: nothing looks green that did not run, and every unrecovered failure is
named in the last 40 lines, right above a verdict line whose exit code is the process's."""

from __future__ import annotations

from typing import Any

from report_records import Record, child, phase_span, record, result

from simpler.ci import gha
from simpler.reporting.last_screen import INDEX_CAP, LAST_SCREEN
from simpler.reporting.records import from_dict
from simpler.reporting.summary import Ruling, Summary, summarize

FILE = "tests/st/test_k.py"
HANG_RC, HANG_WHERE = 507046, "aclrtSynchronizeStreamWithTimeout"


def last_line(summary: Summary) -> str:
    return summary.text.rstrip("\n").splitlines()[-1]


def last_screen(summary: Summary) -> list[str]:
    return summary.text.rstrip("\n").splitlines()[-LAST_SCREEN:]


def planned_span(phase: str, planned: list[str], *inner: Record, **plan: Any) -> list[Record]:
    """A phase whose start record carries its plan, as ``simpler run`` writes it."""
    records = phase_span(phase, *inner)
    records[0] = from_dict({**records[0].raw, "planned": planned, **plan})
    return records


def skipped(n: int, reason: str, prefix: str = "test_s") -> list[Record]:
    return [
        result(f"{FILE}::{prefix}{i}", "skipped", message=f"Skipped: {reason}", device=None)
        for i in range(n)
    ]


def loud_failures(count: int) -> list[Record]:
    """Failures with 80-line tracebacks: the details above push each other off the screen."""
    tail = "\n".join(f"traceback line {n}" for n in range(80))
    failures = []
    for i in range(count):
        fields: dict[str, Any] = {"tail": tail}
        if i % 2:
            fields.update(rc=HANG_RC, where=HANG_WHERE)
        else:
            fields["message"] = f"GoldenMismatch: out[{i}] differs\nsecond line"
        failures.append(result(f"{FILE}::test_fail_{i:02}", "failed", **fields))
    return failures


# --- nothing ran --------------------------------------------------------------------------


def test_a_run_where_every_test_skipped_says_nothing_ran_with_the_reasons_grouped() -> None:
    records = phase_span(
        "l2", *skipped(6, "--platform required"), *skipped(3, "no card", prefix="test_c")
    )
    summary = summarize(records)
    assert summary.exit_code == 0  # pytest's own exit code for an all-skipped run
    assert last_line(summary) == "simpler: nothing ran: 9 of 9 skipped -> exit 0"
    assert last_screen(summary)[-4:-1] == [
        "Skipped: 9 of 9 test(s), by reason:",
        "     6  --platform required",
        "     3  no card",
    ]


def test_fail_if_nothing_ran_makes_an_all_skipped_run_exit_1_and_says_why() -> None:
    summary = summarize(
        phase_span("l2", *skipped(9, "--platform required")), fail_if_nothing_ran=True
    )
    assert summary.exit_code == 1
    assert last_line(summary) == (
        "simpler: nothing ran: 9 of 9 skipped -> exit 1 (--fail-if-nothing-ran)"
    )


def test_one_test_that_ran_is_not_nothing_ran() -> None:
    records = phase_span("l2", *skipped(8, "slow"), result(f"{FILE}::test_x", "xfailed"))
    summary = summarize(records, fail_if_nothing_ran=True)
    assert summary.exit_code == 0
    assert last_line(summary).startswith("simpler: 0 passed,")
    assert last_line(summary).endswith("8 skipped, 1 xfailed -> exit 0")


def test_nothing_selected_is_pytests_exit_5_and_the_flag_makes_it_1() -> None:
    records = planned_span("l2", [], selected=0)
    assert summarize(records).exit_code == 5
    assert last_line(summarize(records)) == "simpler: nothing ran: no test selected -> exit 5"
    flagged = summarize(records, fail_if_nothing_ran=True)
    assert flagged.exit_code == 1
    assert last_line(flagged).endswith("-> exit 1 (--fail-if-nothing-ran)")


def test_a_phase_with_nothing_to_do_never_fails_even_under_the_flag() -> None:
    # The suite holds tests, none of them Resource tests: `--phases resource,report` is idle.
    records = planned_span("resource", [], selected=12)
    summary = summarize(records, fail_if_nothing_ran=True)
    assert summary.exit_code == 0
    assert last_line(summary) == "simpler: nothing to run in phase(s) resource -> exit 0"
    only_retry = summarize(phase_span("retry"), fail_if_nothing_ran=True)
    assert last_line(only_retry) == "simpler: nothing to run in phase(s) retry -> exit 0"


def test_when_most_device_tests_skipped_the_reasons_are_shown_too() -> None:
    ran = [result(f"{FILE}::test_ok{i}", "passed") for i in range(4)]
    most = summarize(phase_span("l2", *ran, *skipped(5, "card busy")))
    assert most.exit_code == 0
    assert last_screen(most)[-3:-1] == ["Skipped: 5 of 9 test(s), by reason:", "     5  card busy"]
    few = summarize(phase_span("l2", *ran, *skipped(4, "card busy")))
    assert "by reason" not in few.text


def test_tests_that_use_no_device_do_not_count_toward_the_device_skips() -> None:
    ran = [result(f"{FILE}::test_ok{i}", "passed") for i in range(2)]
    plain = skipped(3, "no network", prefix="test_plain")
    records = planned_span(
        "l2",
        [r.raw["nodeid"] for r in (*ran, *plain)],
        *ran,
        *plain,
        no_device=[r.raw["nodeid"] for r in plain],
        selected=5,
    )
    assert "by reason" not in summarize(records).text  # 0 of 2 device tests skipped


def test_the_skip_reasons_are_capped_with_a_count_of_the_rest() -> None:
    records = phase_span("l2", *[s for i in range(14) for s in skipped(1, f"r{i:02}", f"t{i}_")])
    screen = last_screen(summarize(records))
    assert "  +4 more reason(s), 4 test(s)" in screen
    assert sum(1 for line in screen if line.startswith("     1  r")) == 10


# --- planned tests without a verdict ------------------------------------------------------


def test_planned_tests_not_run_are_counted_named_and_never_green() -> None:
    planned = [f"{FILE}::test_{i}" for i in range(4)]
    end = record("phase", "l2", event="end", counts={}, returncode=1, interrupted="SIGINT")
    records = [
        record("phase", "l2", event="start", planned=planned, selected=4),
        result(planned[0], "passed"),
        end,
    ]
    summary = summarize(records)
    assert summary.exit_code == 1
    assert summary.completeness.without_verdict == planned[1:]
    screen = last_screen(summary)
    assert "*** 3 planned test(s) not run (l2: interrupted by SIGINT) ***" in screen
    assert all(f"  {nodeid}" in screen for nodeid in planned[1:])
    # The interruption is not a failed test: the tests it stopped are not run.
    assert last_line(summary).startswith("simpler: 1 passed, 0 recovered, 0 flaky, 0 failed, ")
    assert last_line(summary).endswith("3 not run -> exit 1")


def test_a_resource_test_whose_child_crashed_has_its_verdict_in_the_child() -> None:
    nodeid = "tests/st/test_m.py::test_two"
    records = planned_span("resource", [nodeid], child(nodeid=nodeid, returncode=-11))
    summary = summarize(records)
    assert summary.completeness.without_verdict == []
    assert "without a verdict" not in summary.text


def test_the_runs_ruling_is_the_exit_code_of_the_verdict_line() -> None:
    records = phase_span("l2", result(f"{FILE}::test_ok", "passed"))
    summary = summarize(records, ruling=Ruling(130, "interrupted by SIGINT"))
    assert summary.exit_code == 130
    assert last_line(summary) == (
        "simpler: 1 passed, 0 recovered, 0 flaky, 0 failed -> exit 130 (interrupted by SIGINT)"
    )


# --- the index of failures ----------------------------------------------------------------


def test_every_failure_is_in_the_last_40_lines_however_long_the_tracebacks() -> None:
    summary = summarize(phase_span("l2", *loud_failures(7)), tail_lines=80)
    screen = last_screen(summary)
    assert screen[-9] == "Unrecovered failures: 7 (details above)"
    assert screen[-8] == f"  1) {FILE}::test_fail_00: failed, GoldenMismatch: out[0] differs [l2]"
    assert screen[-7] == f"  2) {FILE}::test_fail_01: failed, rc={HANG_RC} at {HANG_WHERE} [l2]"
    # The same numbers and order as the detailed blocks above.
    text = summary.text
    blocks = [text.index(f"\n{n}) {FILE}::test_fail_{n - 1:02}: failed") for n in range(1, 8)]
    assert blocks == sorted(blocks)
    assert last_line(summary).endswith("7 failed -> exit 1")


def test_the_index_is_capped_at_30_and_the_whole_tail_fits_one_screen() -> None:
    failures = loud_failures(INDEX_CAP + 5)
    planned = [r.raw["nodeid"] for r in failures] + [f"{FILE}::test_lost_{i}" for i in range(9)]
    skips = [s for i in range(20) for s in skipped(3, f"reason {i:02}", f"t{i}_")]
    records = planned_span("l2", planned + [s.raw["nodeid"] for s in skips], *failures, *skips)
    summary = summarize(records)
    lines = summary.text.rstrip("\n").splitlines()
    tail = lines[lines.index(next(x for x in lines if x.startswith("Skipped: "))) :]
    assert len(tail) <= LAST_SCREEN, tail
    screen = last_screen(summary)
    for number in range(1, INDEX_CAP + 1):
        assert any(x.startswith(f"  {number}) {FILE}::test_fail_{number - 1:02}:") for x in screen)
    assert "  +5 more above" in screen
    assert not any(x.startswith("  31) ") for x in screen)
    assert any(x.startswith("*** 9 planned test(s) not run") for x in screen)
    assert last_line(summary).endswith("60 skipped, 9 not run -> exit 1")


def test_child_and_phase_failures_have_an_index_line_too() -> None:
    crashed = child(label="two_cards", returncode=-11, signal="SIGSEGV")
    broken = record("phase", "retry", event="end", returncode=3, error="OSError: disk full")
    records = [
        *phase_span("resource", crashed),
        record("phase", "retry", event="start"),
        broken,
    ]
    screen = last_screen(summarize(records))
    assert "  1) tests/st/test_m.py::test_two: SIGSEGV [resource]" in screen
    assert "  2) phase retry: failed inside simpler: OSError: disk full" in screen


# --- GitHub Actions -----------------------------------------------------------------------


def test_the_step_summary_leads_with_the_same_index() -> None:
    summary = summarize(phase_span("l2", *loud_failures(3)))
    markdown = gha.step_summary_markdown(summary)
    entry = f"1) {FILE}::test_fail_00: failed, GoldenMismatch: out[0] differs [l2]"
    assert markdown.index("**Unrecovered failures: 3**") < markdown.index("| Label/Test |")
    assert markdown.index(entry) < markdown.index("| Label/Test |")


def test_nothing_ran_is_a_warning_annotation_and_a_warning_step_summary() -> None:
    summary = summarize(phase_span("l2", *skipped(9, "--platform required")))
    assert gha.nothing_ran_annotation(summary) == (
        "::warning title=Nothing ran::9 of 9 test(s) skipped; most: 9 x --platform required"
    )
    markdown = gha.step_summary_markdown(summary)
    assert markdown.startswith("## :warning: simpler: nothing ran: 9 of 9 skipped -&gt; exit 0")
    assert "     9  --platform required" in markdown
    ran = summarize(phase_span("l2", result(f"{FILE}::test_ok", "passed")))
    assert gha.nothing_ran_annotation(ran) is None


def test_planned_tests_without_a_verdict_are_red_even_when_nothing_else_failed() -> None:
    planned = [f"{FILE}::test_{i}" for i in range(3)]
    records = planned_span("l2", planned, result(planned[0], "passed"), selected=3)
    summary = summarize(records)
    assert summary.failures == []
    assert summary.exit_code == 1
    assert "*** 2 planned test(s) not run (l2: no record of them) ***" in summary.text
    assert last_line(summary) == (
        "simpler: 1 passed, 0 recovered, 0 flaky, 0 failed, 2 not run -> exit 1"
    )
