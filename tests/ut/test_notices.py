"""The notices above the summary: what a run did to its machine, said before its verdicts."""

from __future__ import annotations

from report_records import child, phase_span, record

from simpler.reporting.notices import report_text, retired_device_lines
from simpler.reporting.summary import summarize
from simpler.reporting.tables import child_rows, child_status, failure_rows


def test_devices_taken_out_and_leftovers_come_before_the_summary_in_that_order() -> None:
    records = [
        record("leftover", processes=[{"pid": 42, "name": "sleep", "test": None}]),
        record("device_retired", "resource", devices=[1, 3], reason="worker could not be reset"),
        record("quarantine", "resource", devices=[2], reason="an older simpler wrote this"),
    ]
    text = report_text(records, "simpler: 1 passed -> exit 0")
    assert text.splitlines() == [
        "*** Retired device(s) 1, 3 for the rest of the run: worker could not be reset ***",
        "*** Retired device(s) 2 for the rest of the run: an older simpler wrote this ***",
        "*** 1 leftover process(es) killed: sleep (42) ***",
        "simpler: 1 passed -> exit 0",
    ]


def test_a_run_that_touched_no_device_or_process_prints_only_its_summary() -> None:
    assert retired_device_lines([record("test", nodeid="t.py::a", outcome="passed")]) == []
    assert report_text([], "simpler: 1 passed -> exit 0") == "simpler: 1 passed -> exit 0"


def test_the_tables_say_in_plain_text_what_failed_where_and_for_how_long() -> None:
    crashed = child(returncode=None, signal="SIGSEGV", duration_s=2)
    (row,) = failure_rows(summarize(phase_span("resource", crashed)).failures)
    assert (row.label, row.nodeid, row.result) == (
        "two_cards",
        crashed.raw["nodeid"],
        "killed by SIGSEGV",
    )
    assert (row.devices, row.duration_s, row.log) == ("4,5", 2.0, ".simpler/logs/two_cards.log")
    (listed,) = child_rows([child(returncode=1), child(returncode=0)])
    assert (listed.failed, listed.result) == (False, "passed")  # the latest record decides
    assert child_status(crashed) == "FAIL signal=SIGSEGV devices=4,5"
