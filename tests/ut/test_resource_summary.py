"""The block printed last when Resource-phase children failed: diagnosable from the log's tail."""

from __future__ import annotations

from report_records import child, record

from simpler.reporting.resource_block import (
    describe_exit,
    failed_children,
    latest_children,
    render_resource_failures,
)


def test_nothing_is_printed_when_every_child_passed() -> None:
    assert render_resource_failures([child(), child(label="other")]) == ""


def test_a_signalled_child_names_the_signal_devices_duration_and_log() -> None:
    text = render_resource_failures(
        [child(returncode=None, signal="SIGSEGV", duration_s=2.34, tail="boom\n")]
    )
    assert text.startswith("*** Resource phase failed: 1 child job(s) ***\n")
    assert "1) two_cards: killed by SIGSEGV" in text
    assert "test: tests/st/test_m.py::test_two" in text
    assert "devices: 4,5, duration: 2.3 s" in text
    assert "log: .simpler/logs/two_cards.log" in text
    assert "output:\n    boom" in text


def test_a_child_that_died_before_pytests_summary_line_is_named_crashed() -> None:
    text = render_resource_failures([child(returncode=1, reached_summary=False)])
    assert "two_cards: rc=1, crashed before pytest's summary line" in text


def test_a_timeout_is_named_with_its_duration() -> None:
    timed_out = child(returncode=None, signal="SIGKILL", timed_out=True, duration_s=30.0)
    assert describe_exit(timed_out) == "timed out after 30.0 s, stopped with SIGKILL"
    assert "two_cards: timed out after 30.0 s" in render_resource_failures([timed_out])


def test_a_plain_nonzero_exit_and_a_missing_exit_status() -> None:
    assert describe_exit(child(returncode=1)) == "rc=1"
    assert describe_exit(child(returncode=None)) == "rc=? (no exit status recorded)"


def test_the_tail_is_cut_to_tail_lines_and_points_at_the_full_log() -> None:
    tail = "\n".join(f"line {n}" for n in range(200))
    text = render_resource_failures([child(returncode=1, tail=tail)], tail_lines=5)
    assert "output (last 5 of 200 lines; full output in .simpler/logs/two_cards.log):" in text
    shown = [line for line in text.splitlines() if line.startswith("    line ")]
    assert shown == [f"    line {n}" for n in range(195, 200)]


def test_the_default_tail_is_80_lines_and_colour_codes_are_dropped() -> None:
    tail = "\n".join(f"\x1b[31mline {n}\x1b[0m" for n in range(100))
    text = render_resource_failures([child(returncode=1, tail=tail)])
    assert "last 80 of 100 lines" in text
    assert "\x1b" not in text
    assert "    line 20\n" in text and "    line 19\n" not in text


def test_only_the_latest_record_per_label_counts() -> None:
    failed_then_passed = [child(returncode=1), child(returncode=0)]
    passed_then_failed = [child(label="b"), child(label="b", returncode=3)]
    assert failed_children(failed_then_passed) == []
    assert [c.returncode for c in failed_children(passed_then_failed)] == [3]
    assert "*** Resource phase failed: 1 child job(s) ***" in render_resource_failures(
        failed_then_passed + passed_then_failed
    )


def test_other_record_types_in_a_whole_report_are_ignored() -> None:
    test_record = record("test", nodeid="x", outcome="failed", label="two_cards")
    assert latest_children([child(returncode=2), test_record]) == [child(returncode=2)]


def test_several_failures_are_numbered_in_the_order_their_labels_appeared() -> None:
    text = render_resource_failures(
        [child(label="a", returncode=1), child(label="b", signal="SIGABRT")]
    )
    assert "*** Resource phase failed: 2 child job(s) ***" in text
    assert text.index("1) a: rc=1") < text.index("2) b: killed by SIGABRT")
