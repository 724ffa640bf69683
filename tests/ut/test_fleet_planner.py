"""The matrix plan: every unit in exactly one job of a class that fits it, the fewest jobs
that meet the target, deterministic whatever the order of the units."""

from __future__ import annotations

import random

import pytest

from simpler.fleet.planner import MAX_MATRIX_JOBS, PlanError, RunnerClass, Unit, plan

CLASSES = [
    RunnerClass(1, "cpu-1"),
    RunnerClass(2, "gpu-2"),
    RunnerClass(4, "gpu-4"),
    RunnerClass(8, "gpu-8"),
]


def registry_units() -> list[Unit]:
    rng = random.Random(25)
    units = []
    for devices, count in ((1, 40), (2, 12), (4, 8), (8, 4)):
        units += [
            Unit(f"d{devices}-{i:02d}", devices, round(rng.uniform(20, 300), 1))
            for i in range(count)
        ]
    return units


def test_each_unit_lands_once_on_the_smallest_class_that_fits() -> None:
    units = registry_units()
    made = plan(units, CLASSES, target_s=900)
    placed = [(key, job.devices) for job in made.jobs for key in job.units]
    assert sorted(key for key, _ in placed) == sorted(u.key for u in units)
    needs = {u.key: u.devices for u in units}
    assert all(devices == needs[key] for key, devices in placed)


def test_the_fewest_jobs_that_meet_the_target() -> None:
    units = registry_units()
    made = plan(units, CLASSES, target_s=900, startup_s=30)
    assert made.est_wall_s <= 900 and not made.notes
    for cls in made.classes:
        fewer = plan(
            [u for u in units if u.devices == cls.runner.devices],
            [cls.runner],
            jobs={cls.runner.devices: len(cls.jobs) - 1} if len(cls.jobs) > 1 else None,
            target_s=None if len(cls.jobs) > 1 else 900,
            startup_s=30,
        )
        if len(cls.jobs) > 1:
            assert fewer.est_wall_s > 900, cls.runner.label  # one job less misses the target


def test_two_jobs_that_fit_share_a_runner() -> None:
    # Two 4-device jobs of 100 s on an 8-device runner: one job, 100 s, not 200.
    units = [Unit("a", 4, 100.0), Unit("b", 4, 100.0)]
    made = plan(units, [RunnerClass(8, "gpu-8")], target_s=150)
    assert [len(job.units) for job in made.jobs] == [2]
    assert made.est_wall_s == pytest.approx(100.0)


def test_the_plan_is_the_same_whatever_the_order_of_the_units() -> None:
    units = registry_units()
    shuffled = list(units)
    random.Random(3).shuffle(shuffled)
    assert plan(units, CLASSES, target_s=600) == plan(shuffled, CLASSES, target_s=600)


def test_a_unit_no_class_fits_is_one_line() -> None:
    with pytest.raises(PlanError, match="needs 8 devices; the largest runner class has 4"):
        plan([Unit("big", 8, 10.0)], CLASSES[:3], target_s=60)
    with pytest.raises(PlanError, match="needs 4 devices, its runner class has 2"):
        plan([Unit("m", 4, 10.0, runner_devices=2)], CLASSES, target_s=60)


def test_a_matrix_past_githubs_limit_asks_for_a_longer_target() -> None:
    units = [Unit(f"t{i}", 1, 100.0) for i in range(MAX_MATRIX_JOBS + 1)]
    with pytest.raises(PlanError, match="longer target"):
        plan(units, [RunnerClass(1, "cpu-1")], target_s=100)


def test_fixed_job_counts_per_class() -> None:
    units = registry_units()
    made = plan(units, CLASSES, jobs={1: 3, 2: 2, 4: 2, 8: 1})
    assert [len(c.jobs) for c in made.classes] == [3, 2, 2, 1]
    with pytest.raises(PlanError, match="given no jobs"):
        plan(units, CLASSES, jobs={1: 3})


def test_l2_files_gather_where_their_phase_has_started_once() -> None:
    # The scene suite's shape: three Resource tests, small L2 files whose pooled workers
    # cost 3 s to start. Dealt by work alone, every job would pay that start-up.
    units = [
        Unit("rt-a", 2, 1.5, phase="resource"),
        Unit("rt-b", 2, 1.7, phase="resource"),
        Unit("rt-c", 1, 1.7, phase="resource"),
        *(Unit(f"f{i}.py", 1, s, phase="l2") for i, s in enumerate((0.6, 0.5, 0.35, 0.1))),
    ]
    made = plan(units, [RunnerClass(2, "gpu-2")], jobs={2: 3}, startup_s=1.5,
                phase_startup_s={"l2": 3.0})  # fmt: skip
    with_l2 = [job for job in made.jobs if any(key.endswith(".py") for key in job.units)]
    assert len(with_l2) == 1
    dealt_only = plan(units, [RunnerClass(2, "gpu-2")], jobs={2: 3}, startup_s=1.5)
    assert made.est_wall_s < 1.5 + 3.0 + 1.7 + 0.6  # never an L2 job that also runs rt-b
    assert dealt_only.est_wall_s <= made.est_wall_s  # free start-ups: any split is as good


def test_an_l2_file_moves_to_a_larger_runner_when_that_finishes_sooner() -> None:
    # A 4-device test leaves 4 of an 8-device runner's devices idle; six 50 s files on the
    # one 1-device job would take 300 s there.
    files = [Unit(f"f{i}.py", 1, 50.0, phase="l2") for i in range(6)]
    wide = Unit("wide", 4, 100.0, phase="resource")
    narrow = Unit("narrow", 1, 20.0, phase="resource")
    classes = [RunnerClass(1, "cpu-1"), RunnerClass(8, "gpu-8")]
    made = plan([*files, wide, narrow], classes, jobs={1: 1, 8: 1})
    placed = {key: job.devices for job in made.jobs for key in job.units}
    assert made.est_wall_s < 300.0
    assert 1 <= sum(placed[f.key] == 8 for f in files) <= 5
    assert placed["narrow"] == 1  # a Resource test stays on the smallest class that fits it
    registry = [Unit(f"r{i}", 1, 50.0) for i in range(6)] + [Unit("wide", 4, 100.0)]
    kept = plan(registry, classes, jobs={1: 1, 8: 1})
    assert {key: job.devices for job in kept.jobs for key in job.units}["r0"] == 1
