"""The dry run on a virtual clock: every schedule is feasible, fifo is strict, nobody starves."""

from __future__ import annotations

import json
import math
from itertools import pairwise

import pytest
from bench_workloads import makespan_figures, mixed_workload
from hypothesis import given, settings
from hypothesis import strategies as st

from simpler.scheduler.jobs import Job
from simpler.scheduler.policies import POLICIES, order_jobs
from simpler.scheduler.simulate import Placement, Schedule, dry_run

PROPERTY = settings(max_examples=150, deadline=None, database=None)
EPSILON = 1e-9


def job(label: str, devices: int, est_s: float) -> Job:
    return Job(label, devices, argv=("true",), est_s=est_s)


@st.composite
def workloads(draw: st.DrawFn) -> tuple[list[int], list[Job]]:
    """A pool of arbitrary device ids and jobs that each fit it, in submission order."""
    pool = sorted(draw(st.sets(st.integers(0, 63), min_size=1, max_size=8)))
    jobs = [
        job(f"job{index}", draw(st.integers(1, len(pool))), draw(st.floats(1, 100)))
        for index in range(draw(st.integers(0, 25)))
    ]
    return pool, jobs


def by_label(schedule: Schedule) -> dict[str, Placement]:
    return {placement.label: placement for placement in schedule.placements}


@PROPERTY
@given(workload=workloads(), policy=st.sampled_from(POLICIES))
def test_every_schedule_is_feasible(workload: tuple[list[int], list[Job]], policy: str) -> None:
    pool, jobs = workload
    schedule = dry_run(jobs, pool, policy)

    assert sorted(p.label for p in schedule.placements) == sorted(j.label for j in jobs)
    placed = by_label(schedule)
    for j in jobs:
        p = placed[j.label]
        assert len(p.devices) == len(set(p.devices)) == j.devices
        assert set(p.devices) <= set(pool)
        assert p.start_s >= 0
        assert p.end_s == pytest.approx(p.start_s + (j.est_s or 0))
    for device in pool:
        spans = sorted((p.start_s, p.end_s) for p in schedule.placements if device in p.devices)
        for (_, earlier_end), (later_start, _) in pairwise(spans):
            assert later_start >= earlier_end - EPSILON, f"device {device} double-booked"
    assert schedule.makespan_s >= schedule.lower_bound_s - EPSILON
    assert 0 <= schedule.utilization <= 1 + EPSILON


def strict_head_of_line_starts(jobs: list[Job], pool_size: int) -> list[float]:
    """Reference fifo: each job starts at the first moment, not before its predecessor's
    start, when enough devices are free of the jobs already started."""
    started: list[tuple[float, int]] = []  # (end, devices)
    starts: list[float] = []
    clock = 0.0
    for j in jobs:
        ends = sorted({end for end, _ in started if end > clock})
        for moment in [clock, *ends]:
            busy = sum(devices for end, devices in started if end > moment)
            if pool_size - busy >= j.devices:
                clock = moment
                break
        starts.append(clock)
        started.append((clock + (j.est_s or 0), j.devices))
    return starts


@PROPERTY
@given(workload=workloads())
def test_fifo_is_strict_head_of_line_in_the_given_order(
    workload: tuple[list[int], list[Job]],
) -> None:
    pool, jobs = workload
    placed = by_label(dry_run(jobs, pool, "fifo"))
    starts = [placed[j.label].start_s for j in jobs]
    assert starts == sorted(starts)  # never before an earlier job
    assert starts == pytest.approx(strict_head_of_line_starts(jobs, len(pool)))


@PROPERTY
@given(workload=workloads())
def test_backfill_never_delays_a_job_past_its_reservation_when_it_reached_the_head(
    workload: tuple[list[int], list[Job]],
) -> None:
    """A job becomes the head when the last job before it (in policy order) has started.
    From then it waits at most until enough of the jobs running at that moment end."""
    pool, jobs = workload
    ordered = order_jobs(jobs, "backfill", lambda j: j.est_s or 0, len(pool))
    placed = by_label(dry_run(jobs, pool, "backfill"))
    for position, head in enumerate(ordered):
        turn = max((placed[j.label].start_s for j in ordered[:position]), default=0.0)
        before = {j.label for j in ordered[:position]}
        # Backfilled jobs that started exactly at its turn were let in after it was head.
        running_at_turn = [
            p
            for p in placed.values()
            if p.label != head.label
            and p.end_s > turn
            and (p.start_s < turn or (p.start_s == turn and p.label in before))
        ]
        reservation = turn
        for moment in sorted({turn, *(p.end_s for p in running_at_turn)}):
            still_busy = sum(len(p.devices) for p in running_at_turn if p.end_s > moment)
            if len(pool) - still_busy >= head.devices:
                reservation = moment
                break
        assert placed[head.label].start_s <= reservation + EPSILON, head.label


def test_a_big_job_submitted_behind_a_stream_of_small_ones_is_not_starved() -> None:
    # Most devices first: "big" (all 4 devices) runs before the 40 small jobs, and the
    # longest narrow job ("first") takes the first device it frees.
    small = [job(f"small{index:02d}", 1, 40) for index in range(40)]
    jobs = [*small, job("big", 4, 50), job("first", 1, 100)]
    placed = by_label(dry_run(jobs, [0, 1, 2, 3], "backfill"))
    assert placed["big"].start_s == 0.0
    assert placed["first"].start_s == 50.0
    assert all(p.start_s >= 50 for p in placed.values() if p.label.startswith("small"))


def test_backfill_fills_the_idle_devices_that_fifo_leaves_behind_a_wide_job() -> None:
    jobs = [job("long", 1, 100), job("wide", 4, 10), *(job(f"s{i}", 1, 50) for i in range(6))]
    fifo = dry_run(jobs, [0, 1, 2, 3], "fifo")
    backfill = dry_run(jobs, [0, 1, 2, 3], "backfill")
    assert fifo.makespan_s == 210.0  # the six small jobs waited behind "wide" until 110 s
    assert backfill.makespan_s == backfill.lower_bound_s == 110.0  # they ran beside "long"


def test_a_job_larger_than_the_pool_is_refused_by_name() -> None:
    jobs = [job("fits", 2, 1), job("needs-eight", 8, 1)]
    with pytest.raises(ValueError, match="job 'needs-eight' needs 8 devices but the pool has 4"):
        dry_run(jobs, [0, 1, 2, 3])


def test_a_job_with_no_devices_or_a_negative_estimate_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="job 'none' needs 0 devices"):
        dry_run([job("none", 0, 1)], [0])
    with pytest.raises(ValueError, match="job 'backwards' has estimate -1"):
        dry_run([job("backwards", 1, -1)], [0])


def test_a_device_listed_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="name a device more than once"):
        dry_run([job("a", 1, 1)], [0, 0])


def test_jobs_without_an_estimate_take_the_default_or_the_given_estimator() -> None:
    unestimated = Job("plain", 1, argv=("true",))
    assert dry_run([unestimated], [0]).makespan_s == 30.0
    assert dry_run([unestimated], [0], estimate=lambda _: 7.0).makespan_s == 7.0


def test_nothing_to_run_is_an_empty_schedule() -> None:
    assert dry_run([], [0, 1]).to_json() == {
        "makespan_s": 0.0,
        "lower_bound_s": 0.0,
        "utilization": 0.0,
        "jobs": [],
    }


def test_the_json_is_the_shape_of_schedule_dry_run_json() -> None:
    schedule = dry_run([job("a", 2, 10), job("b", 1, 5)], [4, 5, 6])
    document = json.loads(json.dumps(schedule.to_json()))
    assert document == {
        "makespan_s": 10.0,
        "lower_bound_s": 10.0,
        "utilization": pytest.approx(25 / 30),
        "jobs": [
            {"label": "a", "devices": [4, 5], "start_s": 0.0, "end_s": 10.0},
            {"label": "b", "devices": [6], "start_s": 0.0, "end_s": 5.0},
        ],
    }


def test_mixed_workloads_are_reproducible_and_sized_to_the_pool() -> None:
    assert mixed_workload(3, 40, 4) == mixed_workload(3, 40, 4)
    jobs = mixed_workload(3, 200, 4)
    assert {j.devices for j in jobs} == {1, 2, 4}
    assert all(j.est_s is not None and j.est_s > 0 for j in jobs)


def test_the_default_policy_meets_the_makespan_targets_on_mixed_workloads() -> None:
    figures = makespan_figures(seeds=range(5), n_jobs=60)
    assert figures["runs"] == 15
    assert figures["backfill_over_lower_bound"] <= 1.05
    assert figures["backfill_over_fifo"] <= 0.85
    assert not math.isnan(figures["per_pool"]["16"]["backfill_over_lower_bound"])
