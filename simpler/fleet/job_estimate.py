"""What one planned job is expected to take: a run's start-up, then each of its phases in
turn, each phase its own start-up (the L2 phase's pooled workers loading the runner) plus the
Resource scheduler's dry run of its units on the runner's devices. Phases run one after the
other, so an L2 file never overlaps a Resource test in the estimate either."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from simpler.fleet.unit import Unit
from simpler.scheduler.jobs import Job
from simpler.scheduler.simulate import dry_run

__all__ = ["WallModel"]


@dataclass(frozen=True)
class WallModel:
    startup_s: float = 0.0  # what starting one run costs a job
    phase_startup_s: Mapping[str, float] = field(default_factory=dict)  # per phase it has

    def wall(self, shard: Sequence[Unit], devices: int) -> float:
        phases: dict[str | None, list[Job]] = {}
        for unit in shard:
            job = Job(label=unit.key, devices=unit.devices, argv=(), est_s=unit.est_s)
            phases.setdefault(unit.phase, []).append(job)
        pool = list(range(devices))
        total = self.startup_s
        for phase, jobs in phases.items():
            total += self.phase_startup_s.get(phase or "", 0.0) + dry_run(jobs, pool).makespan_s
        return total
