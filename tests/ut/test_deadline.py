"""``--deadline``: the durations people type, and a deadline the run cannot keep refused."""

from __future__ import annotations

import pytest

from simpler.orchestrator.deadline import REPORT_RESERVE_S, parse_duration, run_deadline
from simpler.usage import UsageError


@pytest.mark.parametrize(
    ("text", "seconds"), [("90s", 90), ("10m", 600), ("1h", 3600), ("1.5h", 5400), ("45", 45)]
)
def test_a_duration_reads_as_ci_timeouts_are_written(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "ten minutes", "10x", "-5m", "0s", "1e9999"])
def test_what_is_not_a_duration_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


def test_a_bad_deadline_is_one_usage_line() -> None:
    with pytest.raises(UsageError, match=r"^simpler run: --deadline 'soon' is not a duration"):
        run_deadline("soon", "simpler run")


def test_a_deadline_shorter_than_the_start_up_is_refused() -> None:
    # The reserve for the summary alone is longer than this deadline.
    with pytest.raises(UsageError, match="shorter than this run's start-up"):
        run_deadline(f"{REPORT_RESERVE_S / 2}s", "simpler run")


def test_no_deadline_asked_is_none() -> None:
    assert run_deadline(None, "simpler run") is None and run_deadline("", "simpler run") is None


def test_the_tests_end_a_reserve_before_the_deadline() -> None:
    deadline = run_deadline("1h", "simpler run")
    assert deadline is not None and deadline.reason == "deadline 1h reached"
    assert deadline.tests_end_at == deadline.at - REPORT_RESERVE_S
    assert 0 < deadline.left_s() <= 3600
