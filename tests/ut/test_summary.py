"""The end-of-run summary: what a user reads last, and the exit code CI acts on."""

from __future__ import annotations

import itertools
from typing import Any

from report_records import Record, child, phase_span, record, result

from simpler.reporting.summary import Summary, select_latest_runs, summarize

HANG_RC, HANG_WHERE = 507046, "aclrtSynchronizeStreamWithTimeout"
WORKER = "a5sim/host_build_graph/dev0/gw0"


def lifecycle(*states: str, worker: str = WORKER, run: str = "run-1") -> list[Record]:
    return [
        record("lifecycle", run=run, worker=worker, source=source, dest=dest, trigger="t")
        for source, dest in itertools.pairwise(states)
    ]


def poison_skip(nodeid: str, selector: str = "test_hang", run: str = "run-1") -> Record:
    reason = f"worker {WORKER} poisoned by {selector}"
    return record(
        "poison_skip",
        "l2",
        run,
        nodeid=nodeid,
        selector=selector,
        runtime="hbg",
        reason=reason,
        worker=WORKER,
    )


def hang_failure(nodeid: str = "tests/st/test_a.py::test_hang", **fields: Any) -> Record:
    return result(
        nodeid,
        "failed",
        rc=HANG_RC,
        where=HANG_WHERE,
        worker=WORKER,
        poisoned=True,
        message="DeviceRuntimeError: op timed out",
        tail="Traceback\n  raise DeviceRuntimeError",
        **fields,
    )


def last_line(summary: Summary) -> str:
    return summary.text.rstrip("\n").splitlines()[-1]


def test_hang_victim_is_recovered_in_a_fresh_process_and_the_run_is_green() -> None:
    victim = "tests/st/test_a.py::test_after_hang"
    records = [
        *phase_span(
            "l2",
            result("tests/st/test_a.py::test_ok", "passed"),
            hang_failure(),
            poison_skip(victim),
            result(victim, "poison_skipped"),
        ),
        *phase_span(
            "retry",
            result(victim, "recovered", phase="retry", attempt=2),
            result("tests/st/test_a.py::test_hang", "flaky", phase="retry", attempt=2),
        ),
    ]
    summary = summarize(records)
    assert summary.exit_code == 0
    assert summary.verdicts[victim].outcome == "recovered"
    assert "l2: 1 passed, 1 failed, 1 poison_skipped" in summary.text
    assert "retry: 1 recovered, 1 flaky" in summary.text
    assert "Recovered (re-run in a fresh process): 1\n  " + victim in summary.text
    assert "test_hang passed on attempt 2" in summary.text
    assert last_line(summary) == "simpler: 1 passed, 1 recovered, 1 flaky, 0 failed -> exit 0"


def test_poison_skipped_test_never_re_run_is_an_unrecovered_failure() -> None:
    victim = "tests/st/test_a.py::test_after_hang"
    # The plain skip pytest reports for it must not erase the poison registration.
    records = phase_span("l2", hang_failure(), poison_skip(victim), result(victim, "skipped"))
    summary = summarize(records)
    assert summary.exit_code == 1
    assert summary.verdicts[victim].outcome == "poison_skipped"
    assert "*** 2 unrecovered failure(s) ***" in summary.text
    assert f"{victim}: poison_skipped, never re-run" in summary.text
    assert f"skipped because: worker {WORKER} poisoned by test_hang" in summary.text
    assert last_line(summary).endswith("2 failed -> exit 1")


def test_flaky_is_green_unless_fail_on_flaky() -> None:
    nodeid = "tests/st/test_b.py::test_sometimes"
    records = [
        *phase_span("l2", result(nodeid, "failed", message="GoldenMismatch: off by one")),
        *phase_span("retry", result(nodeid, "flaky", phase="retry", attempt=2)),
    ]
    assert summarize(records).exit_code == 0
    strict = summarize(records, fail_on_flaky=True)
    assert strict.exit_code == 1
    assert "Flaky (failed, then passed on retry): 1" in strict.text
    assert last_line(strict).endswith("-> exit 1 (flaky fails the run: --fail-on-flaky)")


def test_incomplete_run_exits_1_and_still_lists_what_finished() -> None:
    golden = "tests/st/test_a.py::test_golden"
    records = [
        *phase_span("l2", result(golden, "failed", message="GoldenMismatch: out[3]")),
        *phase_span(
            "resource",
            result("tests/st/test_m.py::test_two", "passed", phase="resource"),
            ended=False,
        ),
    ]
    summary = summarize(records)
    assert summary.incomplete
    assert summary.exit_code == 1
    text = summary.text
    assert "resource: 1 passed -- INCOMPLETE (started, never ended)" in text
    banner = "*** Run is INCOMPLETE: phase(s) resource started and never ended; "
    assert text.index(banner) < text.index("*** 1 unrecovered failure(s) ***")
    assert text.index("*** 1 unrecovered failure(s) ***") < text.index(f"1) {golden}: failed")
    assert last_line(summary).endswith("-> exit 1 (INCOMPLETE)")


def test_incomplete_run_with_only_passes_is_still_red() -> None:
    records = phase_span("l2", result("tests/st/test_a.py::test_ok", "passed"), ended=False)
    assert summarize(records).exit_code == 1


def test_golden_mismatch_is_listed_with_its_message_and_no_device_rc() -> None:
    message = "GoldenMismatch: vector_add output differs at [3]: 1.0 != 2.0"
    records = phase_span(
        "l2", result("tests/st/test_k.py::test_add", "failed", message=message, worker=WORKER)
    )
    text = summarize(records).text
    assert "1) tests/st/test_k.py::test_add: failed\n" in text
    assert f"message: {message}" in text
    assert "rc=" not in text


def test_device_failure_shows_rc_where_and_the_workers_lifecycle_path() -> None:
    records = [
        *lifecycle("created", "healthy", "poisoned", "force_reset", "rebuilt"),
        *phase_span("l2", hang_failure(device=3)),
    ]
    text = summarize(records).text
    assert f"tests/st/test_a.py::test_hang: failed, rc={HANG_RC} at {HANG_WHERE}" in text
    assert "attempt 1, device 3, runtime host_build_graph" in text
    path = "created -> healthy -> poisoned -> force_reset -> rebuilt"
    assert f"worker {WORKER}: {path} (this failure poisoned it)" in text
    assert "message: DeviceRuntimeError: op timed out" in text


def test_failure_output_is_cut_to_tail_lines_and_stripped_of_colour() -> None:
    tail = "\n".join(f"\x1b[31mline {n}\x1b[0m" for n in range(1, 201))
    records = phase_span("l2", result("tests/st/test_a.py::test_loud", "failed", tail=tail))
    text = summarize(records, tail_lines=5).text
    assert "output (last 5 of 200 lines):\n      line 196\n" in text
    assert "line 200" in text
    assert "line 195" not in text
    assert "\x1b" not in text


def test_shard_files_merge_keeping_only_each_files_latest_run() -> None:
    nodeid_a, nodeid_b = "tests/st/test_a.py::test_x", "tests/st/test_b.py::test_y"
    shard_1 = [
        *phase_span("l2", result(nodeid_a, "failed", run="old"), run="old"),
        *phase_span("l2", result(nodeid_a, "passed", run="shard-1"), run="shard-1"),
    ]
    shard_2 = phase_span("l2", result(nodeid_b, "passed", run="shard-2"), run="shard-2")
    summary = summarize(select_latest_runs([shard_1, shard_2]))
    assert summary.runs == ["shard-1", "shard-2"]
    assert summary.text.startswith("simpler summary: runs shard-1, shard-2\n")
    assert summary.exit_code == 0
    assert last_line(summary).startswith("simpler: 2 passed, 0 recovered, 0 flaky, 0 failed")


def test_retry_shard_supersedes_l2_shard_whichever_file_comes_first() -> None:
    nodeid = "tests/st/test_a.py::test_after_hang"
    l2_shard = phase_span("l2", poison_skip(nodeid, run="l2-job"), run="l2-job")
    retry_shard = phase_span(
        "retry",
        result(nodeid, "recovered", phase="retry", attempt=2, run="retry-job"),
        run="retry-job",
    )
    summary = summarize(select_latest_runs([retry_shard, l2_shard]))
    assert summary.verdicts[nodeid].outcome == "recovered"
    assert summary.exit_code == 0


def test_nothing_ran_is_never_green() -> None:
    for records in ([], phase_span("l2")):
        summary = summarize(records)
        assert summary.exit_code == 5  # pytest's own "no tests collected"
        assert "*** nothing ran: the report holds no test verdict ***" in summary.text
        assert last_line(summary) == "simpler: nothing ran: no test selected -> exit 5"


def test_malformed_report_lines_are_counted_in_the_header() -> None:
    records = phase_span("l2", result("tests/st/test_a.py::test_ok", "passed"))
    lines = summarize(records, malformed=3).text.splitlines()
    assert lines[:2] == ["simpler summary: run run-1", "3 malformed report line(s) skipped"]
    assert "malformed" not in summarize(records).text


def test_child_killed_by_a_signal_before_pytests_summary_is_named_as_a_crash() -> None:
    crashed = child(
        label="test_two_cards",
        returncode=-11,
        signal="SIGSEGV",
        duration_s=12.34,
        reached_summary=False,
        tail="collected 1 item\nFatal Python error",
        log=".simpler/logs/test_two_cards.log",
    )
    summary = summarize(phase_span("resource", crashed))
    assert summary.exit_code == 1
    text = summary.text
    assert "1) child test_two_cards (tests/st/test_m.py::test_two): SIGSEGV" in text
    assert "devices 4,5, 12.3s" in text
    assert "crashed before pytest's summary line" in text
    assert "log: .simpler/logs/test_two_cards.log" in text
    assert "Fatal Python error" in text


def test_failed_child_whose_test_passed_on_retry_is_not_a_failure() -> None:
    nodeid = "tests/st/test_m.py::test_two"
    failed_child = child(nodeid=nodeid, returncode=1)
    records = [
        *phase_span("resource", result(nodeid, "failed", phase="resource"), failed_child),
        *phase_span("retry", result(nodeid, "flaky", phase="retry", attempt=2)),
    ]
    summary = summarize(records)
    assert summary.failures == []
    assert summary.exit_code == 0


def test_phase_that_crashed_without_reporting_a_failing_test_is_red() -> None:
    crashed = record("phase", "l2", event="end", counts={}, returncode=1, duration_s=0.1)
    records = [
        record("phase", "l2", event="start"),
        crashed,
        *phase_span("resource", result("tests/st/test_m.py::test_two", "passed", phase="resource")),
    ]
    summary = summarize(records)
    assert summary.exit_code == 1
    assert "phase l2 ended with returncode 1 but reported no failing test" in summary.text


def test_a_phase_whose_pytest_stopped_on_an_internal_error_is_infrastructure_not_a_test() -> None:
    """Its phase record keeps 3: read again, the report is as red as the run was, and no test
    is counted as failed."""
    stopped = record("phase", "l2", event="end", counts={}, returncode=3, duration_s=0.1)
    records = [
        record("phase", "l2", event="start"),
        stopped,
        *phase_span("resource", result("tests/st/test_m.py::test_two", "passed", phase="resource")),
    ]
    summary = summarize(records)
    assert summary.exit_code == 3 and summary.failures == []
    assert summary.text.rstrip().splitlines()[-1] == (
        "simpler: 1 passed, 0 recovered, 0 flaky, 0 failed -> exit 3 "
        "(infrastructure failure in phase l2)"
    )


def test_phase_counts_fall_back_to_the_end_record() -> None:
    end = record("phase", "l2", event="end", counts={"passed": 4}, returncode=0, duration_s=2.0)
    records = [
        record("phase", "l2", event="start"),
        end,
        *phase_span("retry", result("tests/st/test_a.py::test_x", "passed", phase="retry")),
    ]
    assert "l2: 4 passed (from the phase end record) (2.0s)" in summarize(records).text


def test_a_child_that_never_started_is_one_failure_that_says_so() -> None:
    reason = "not run: only 1 device(s) left outside quarantine 0"
    never = child(
        returncode=None, devices=[], duration_s=0.0, reached_summary=False, tail=reason,
        log="", not_run=reason,
    )  # fmt: skip
    end = record("phase", "resource", event="end", counts={}, returncode=1, duration_s=0.1)
    summary = summarize([record("phase", "resource", event="start"), never, end])
    assert summary.exit_code == 1
    assert len(summary.failures) == 1  # the phase's red exit is this child, not a second cause
    assert f"1) child two_cards (tests/st/test_m.py::test_two): {reason}" in summary.text
    assert "never started" in summary.text
    assert "crashed" not in summary.text and "reported no failing test" not in summary.text
