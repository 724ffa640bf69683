"""The plan of a CI matrix: which runner class each unit goes to, and how many jobs a class
needs to finish within the target (docs/fleet.md, "Plan").

Pure and deterministic, whatever order the units came in. Each unit goes to the smallest
class that fits it (or the class its marker names); a class's units are dealt longest first
into the fewest jobs whose simulated wall (``job_estimate.py``) meets the target, or ``jobs``
per class; then units leave the slowest job while that lowers it (``rebalance.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from simpler.fleet.job_estimate import WallModel
from simpler.fleet.rebalance import Bin, rebalance
from simpler.fleet.unit import Unit

__all__ = ["MAX_MATRIX_JOBS", "ClassPlan", "Plan", "PlanError", "RunnerClass", "Unit", "plan"]

MAX_MATRIX_JOBS = 256  # GitHub Actions' limit on the jobs of one matrix


class PlanError(ValueError):
    """Input no plan can be made from: one line for the user (exit 2)."""


@dataclass(frozen=True)
class RunnerClass:
    devices: int
    label: str


@dataclass(frozen=True)
class PlannedJob:
    id: str
    runner: str
    devices: int
    est_wall_s: float
    units: tuple[str, ...]


@dataclass(frozen=True)
class ClassPlan:
    runner: RunnerClass
    jobs: tuple[PlannedJob, ...]
    lower_bound_s: float  # the class's work spread perfectly over all its jobs' devices
    utilization: float  # device-seconds of work / (jobs x devices x slowest wall)

    @property
    def est_wall_s(self) -> float:
        return max((job.est_wall_s for job in self.jobs), default=0.0)


@dataclass(frozen=True)
class Plan:
    target_s: float | None
    classes: tuple[ClassPlan, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def jobs(self) -> list[PlannedJob]:
        return [job for plan in self.classes for job in plan.jobs]

    @property
    def est_wall_s(self) -> float:
        return max((plan.est_wall_s for plan in self.classes), default=0.0)


def plan(
    units: Sequence[Unit],
    classes: Sequence[RunnerClass],
    *,
    target_s: float | None = None,
    jobs: Mapping[int, int] | None = None,
    startup_s: float = 0.0,
    phase_startup_s: Mapping[str, float] | None = None,
) -> Plan:
    """The plan (the module's docstring). Exactly one of ``target_s`` and ``jobs`` (class
    devices -> job count) is given. Raises :class:`PlanError` for a unit no class fits."""
    if (target_s is None) == (jobs is None):
        raise PlanError("give a target wall time or a job count per class, not both or neither")
    ordered = sorted(classes, key=lambda c: (c.devices, c.label))
    for first, second in pairwise(ordered):
        if first.devices == second.devices:
            raise PlanError(
                f"runner classes {first.label} and {second.label} both have {first.devices} "
                "device(s): give each device count one label"
            )
    model = WallModel(startup_s, dict(phase_startup_s or {}))
    by_class = _assign(sorted(units, key=lambda u: u.key), ordered)
    bins: list[tuple[RunnerClass, Bin[Unit]]] = []
    for runner in ordered:
        members = by_class[runner.devices]
        count = None if jobs is None else jobs.get(runner.devices, 0)
        if count == 0 and members:
            raise PlanError(
                f"{_names(members)} {'needs' if len(members) == 1 else 'need'} the "
                f"{runner.label} class, given no jobs: add "
                f"{runner.devices}=N to --jobs"
            )
        if members:
            shards = _shards(runner, members, target_s, count, model)
            bins += [(runner, Bin(runner.devices, list(shard))) for shard in shards]
    if len(bins) > MAX_MATRIX_JOBS:
        raise PlanError(
            f"the plan needs {len(bins)} jobs, more than a matrix's {MAX_MATRIX_JOBS}: "
            "give a longer target"
        )
    rebalance([b for _, b in bins], model.wall)
    planned = [
        _class_plan(runner, [b.units for r, b in bins if r == runner], model)
        for runner in ordered
        if any(r == runner for r, _ in bins)
    ]
    notes = []
    if target_s is not None:
        late = [p.runner.label for p in planned if p.est_wall_s > target_s]
        if late:
            notes.append(f"over the target by a unit longer than it: {', '.join(late)}")
    return Plan(target_s, tuple(planned), tuple(notes))


def _assign(units: Sequence[Unit], classes: Sequence[RunnerClass]) -> dict[int, list[Unit]]:
    by_class: dict[int, list[Unit]] = {c.devices: [] for c in classes}
    largest = classes[-1].devices if classes else 0
    for unit in units:
        if unit.runner_devices is not None:
            if unit.runner_devices not in by_class:
                raise PlanError(
                    f"{unit.name} asks for a {unit.runner_devices}-device runner: no runner "
                    "class has that many devices"
                )
            if unit.runner_devices < unit.devices:
                raise PlanError(
                    f"{unit.name} needs {unit.devices} devices, its runner class has "
                    f"{unit.runner_devices}"
                )
            by_class[unit.runner_devices].append(unit)
            continue
        fitting = [c.devices for c in classes if c.devices >= unit.devices]
        if not fitting:
            raise PlanError(
                f"{unit.name} needs {unit.devices} devices; the largest runner class has "
                f"{largest}: add a class of {unit.devices} or more to --runners"
            )
        by_class[fitting[0]].append(unit)
    return by_class


def _names(units: Sequence[Unit], shown: int = 3) -> str:
    """The first few units by name, and how many more: one readable line."""
    names = ", ".join(unit.name for unit in units[:shown])
    return names + (f" and {len(units) - shown} more" if len(units) > shown else "")


def _shards(
    runner: RunnerClass,
    units: Sequence[Unit],
    target_s: float | None,
    count: int | None,
    model: WallModel,
) -> list[list[Unit]]:
    if count is not None:
        return _deal(units, count, runner.devices)
    assert target_s is not None
    return _fewest_meeting(units, runner.devices, target_s, model)


def _class_plan(
    runner: RunnerClass, shards: Sequence[Sequence[Unit]], model: WallModel
) -> ClassPlan:
    jobs = tuple(
        PlannedJob(
            id=f"{runner.label}-{index + 1}",
            runner=runner.label,
            devices=runner.devices,
            est_wall_s=model.wall(shard, runner.devices),
            units=tuple(unit.key for unit in shard),
        )
        for index, shard in enumerate(shards)
    )
    units = [unit for shard in shards for unit in shard]
    work = sum(unit.devices * unit.est_s for unit in units)
    capacity = len(jobs) * runner.devices
    slowest = max(job.est_wall_s for job in jobs)
    return ClassPlan(
        runner,
        jobs,
        lower_bound_s=max(work / capacity, max(unit.est_s for unit in units)) + model.startup_s,
        utilization=work / (capacity * slowest) if slowest > 0 else 0.0,
    )


def _fewest_meeting(
    units: Sequence[Unit], devices: int, target_s: float, model: WallModel
) -> list[list[Unit]]:
    """The fewest shards whose every wall meets the target. A unit longer than the target
    alone makes the target its own time: more jobs would only idle beside it."""
    target_s = max(target_s, max(model.wall([unit], devices) for unit in units))
    work = sum(unit.devices * unit.est_s for unit in units)
    start = max(1, int(work // (devices * max(target_s - model.startup_s, 1e-9))))
    for count in range(min(start, len(units)), len(units) + 1):
        shards = _deal(units, count, devices)
        if all(model.wall(shard, devices) <= target_s for shard in shards):
            return shards
    return _deal(units, len(units), devices)


def _deal(units: Sequence[Unit], count: int, devices: int) -> list[list[Unit]]:
    """Longest first, each to the shard with the least work per device so far."""
    shards: list[list[Unit]] = [[] for _ in range(max(1, min(count, len(units))))]
    loads = [0.0] * len(shards)
    for unit in sorted(units, key=lambda u: (-u.est_s * u.devices, u.key)):
        lightest = min(range(len(shards)), key=lambda i: (loads[i], i))
        shards[lightest].append(unit)
        loads[lightest] += unit.est_s * unit.devices / devices
    return shards
