"""The placement policy on its own: ordering, one pick() at a time, the bounds."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simpler.scheduler.durations import estimator
from simpler.scheduler.jobs import Job, Running
from simpler.scheduler.policies import (
    POLICIES,
    POLICY_CLASSES,
    lower_bound,
    order_jobs,
    pick,
    unfittable,
)

ESTIMATE = estimator({})
# Modest counts: the whole file runs in about a second; no example database in the repo.
PROPERTY = settings(max_examples=150, deadline=None, database=None)


def job(label: str, devices: int, est_s: float) -> Job:
    return Job(label, devices, argv=("true",), est_s=est_s)


def running(label: str, devices: Sequence[int], ends_at: float) -> Running:
    return Running(job(label, len(devices), ends_at), tuple(devices), 0.0, ends_at)


def test_backfill_orders_most_devices_first_then_longest_then_label() -> None:
    # The old policy put the longest estimate first whatever the size; wide jobs now go
    # first so narrow ones never fragment the pool while a wide one waits.
    jobs = [job("b", 1, 10), job("a", 1, 10), job("short-wide", 4, 5), job("two", 2, 12)]
    jobs.append(job("wide", 4, 10))
    ordered = order_jobs(jobs, "backfill", ESTIMATE, pool_size=4)
    assert [j.label for j in ordered] == ["wide", "short-wide", "two", "a", "b"]


def test_a_long_narrow_job_that_would_end_past_the_bound_in_its_turn_goes_first() -> None:
    # In size order "long" would start once the four pairs (240 device-s on 4 devices)
    # are done, at 60 s, and end at 160 s, far past the 100 s bound. First, it ends at
    # 100 s while the pairs run beside it on the other three devices.
    pairs = [job(f"pair{i}", 2, 30) for i in range(4)]
    jobs = [*pairs, job("long", 1, 100), job("s", 1, 5)]
    ordered = order_jobs(jobs, "backfill", ESTIMATE, pool_size=4)
    assert [j.label for j in ordered] == ["long", "pair0", "pair1", "pair2", "pair3", "s"]


def test_the_last_job_is_not_promoted_for_the_overhang_every_order_has() -> None:
    jobs = [job(f"s{i}", 1, 10) for i in range(7)]
    assert order_jobs(jobs, "backfill", ESTIMATE, pool_size=4) == jobs


def test_fifo_keeps_the_given_order() -> None:
    jobs = [job("short", 1, 1), job("long", 1, 99), job("wide", 4, 10)]
    assert order_jobs(jobs, "fifo", ESTIMATE) == jobs


def test_an_unknown_policy_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="unknown policy 'lifo': choose one of backfill, fifo"):
        order_jobs([], "lifo", ESTIMATE)
    with pytest.raises(ValueError, match="unknown policy"):
        pick("lifo", [], [0], [], 0.0, ESTIMATE)


def test_each_policy_is_its_own_module_registered_under_its_user_visible_name() -> None:
    assert POLICIES == ("backfill", "fifo")  # the default first, as --policy offers them
    for name, policy in POLICY_CLASSES.items():
        assert policy.name == name
        assert policy.__module__ == f"simpler.scheduler.policies.{name}"


def test_jobs_get_the_lowest_free_ids_in_order() -> None:
    started = pick("backfill", [job("a", 2, 5), job("b", 1, 5)], [7, 3, 5], [], 0.0, ESTIMATE)
    assert [(j.label, ids) for j, ids in started] == [("a", (3, 5)), ("b", (7,))]


def test_fifo_stops_at_the_first_job_that_does_not_fit() -> None:
    waiting = [job("one", 1, 5), job("wide", 4, 5), job("small", 1, 5)]
    started = pick("fifo", waiting, [0, 1], [running("busy", [2, 3], 50)], 0.0, ESTIMATE)
    assert [j.label for j, _ in started] == ["one"]  # "small" fits but must wait behind "wide"


def test_backfill_starts_a_short_job_that_ends_before_the_head_reservation() -> None:
    # The head needs all 4 devices; they are free at 50 s. A 10 s job fits in the gap.
    waiting = [job("wide", 4, 20), job("short", 1, 10)]
    started = pick("backfill", waiting, [0, 1], [running("busy", [2, 3], 50)], 0.0, ESTIMATE)
    assert [(j.label, ids) for j, ids in started] == [("short", (0,))]


def test_backfill_holds_back_a_long_job_that_would_delay_the_head() -> None:
    waiting = [job("wide", 4, 20), job("long", 1, 80)]
    assert pick("backfill", waiting, [0, 1], [running("busy", [2, 3], 50)], 0.0, ESTIMATE) == []


def test_backfill_runs_a_long_job_on_devices_the_head_leaves_spare() -> None:
    # At 50 s all 4 devices are free and the head needs 3: one may stay busy past 50 s,
    # so one long job starts and the second must wait.
    waiting = [job("three", 3, 20), job("long1", 1, 80), job("long2", 1, 80)]
    started = pick("backfill", waiting, [0, 1], [running("busy", [2, 3], 50)], 0.0, ESTIMATE)
    assert [j.label for j, _ in started] == ["long1"]


def test_backfill_counts_every_job_ending_at_the_reservation_instant() -> None:
    free_later = [running("x", [1], 50), running("y", [2], 50), running("z", [3], 90)]
    # At 50 s devices 0, 1, 2 are free: the head needs 2, so one is spare for a long job.
    waiting = [job("two", 2, 20), job("long", 1, 80)]
    started = pick("backfill", waiting, [0], free_later, 0.0, ESTIMATE)
    assert [j.label for j, _ in started] == ["long"]


def test_a_job_that_overran_its_estimate_is_taken_as_ending_now() -> None:
    waiting = [job("wide", 2, 20), job("short", 1, 10)]
    # "late" was expected to end at 5 s; it is 30 s now. No gap to fill before the head.
    started = pick("backfill", waiting, [0], [running("late", [1], 5)], 30.0, ESTIMATE)
    assert started == []


def test_unfittable_names_the_jobs_larger_than_the_pool() -> None:
    jobs = [job("fits", 4, 1), job("too-big", 5, 1)]
    assert unfittable(jobs, 4) == [jobs[1]]


def test_lower_bound_is_device_seconds_over_the_pool_or_the_longest_job() -> None:
    assert lower_bound([job("a", 4, 10), job("b", 4, 10)], 4, ESTIMATE) == 20.0
    assert lower_bound([job("long", 1, 100), job("b", 1, 10)], 4, ESTIMATE) == 100.0
    assert lower_bound([], 4, ESTIMATE) == 0.0


# One moment of a run: a pool, some of it busy, and jobs waiting in policy order.
@st.composite
def moments(draw: st.DrawFn) -> tuple[list[int], list[Running], list[Job]]:
    pool = sorted(draw(st.sets(st.integers(0, 31), min_size=1, max_size=8)))
    busy_count = draw(st.integers(0, len(pool)))
    busy = draw(st.permutations(pool))[:busy_count]
    runs: list[Running] = []
    rest = list(busy)
    while rest:
        size = draw(st.integers(1, len(rest)))
        held, rest = rest[:size], rest[size:]
        runs.append(running(f"run{len(runs)}", sorted(held), draw(st.floats(0, 100))))
    estimates = st.floats(0.5, 100)
    waiting = [
        job(f"w{index}", draw(st.integers(1, len(pool))), draw(estimates))
        for index in range(draw(st.integers(0, 10)))
    ]
    free = [device for device in pool if device not in busy]
    return free, runs, waiting


@PROPERTY
@given(moment=moments(), policy=st.sampled_from(POLICIES), now=st.floats(0, 50))
def test_pick_hands_out_only_free_devices_each_once_and_exactly_as_many_as_asked(
    moment: tuple[list[int], list[Running], list[Job]], policy: str, now: float
) -> None:
    free, runs, waiting = moment
    started = pick(policy, waiting, free, runs, now, ESTIMATE)
    handed_out = [device for _, ids in started for device in ids]
    assert len(handed_out) == len(set(handed_out))
    assert set(handed_out) <= set(free)
    assert all(len(ids) == j.devices for j, ids in started)
    assert len({id(j) for j, _ in started}) == len(started)
    if policy == "fifo":
        assert [j for j, _ in started] == waiting[: len(started)]
