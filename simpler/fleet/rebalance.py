"""The plan's last pass: move units out of the slowest job while that makes the matrix finish
sooner. Dealing by work per device (planner.py) is fast but blind to what the walls are made
of: a phase's start-up that only jobs with that phase pay, two-device tests that cannot
overlap on a two-device runner. Each move here is judged on the walls themselves
(job_estimate.py): a unit leaves the slowest job for the job, of its own class or, for an L2
file, of a larger one, where the pair's slower wall ends lowest. Deterministic: candidates
are tried in a fixed order and only a strict improvement is taken.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from simpler.fleet.unit import Unit

__all__ = ["MAX_REBALANCED_UNITS", "Bin", "rebalance"]

# Each move costs a dry run per unit of the slowest job per other job: a registry of
# thousands of units keeps the dealt plan, which is within one unit of balanced there.
MAX_REBALANCED_UNITS = 400


U = TypeVar("U", bound=Unit)


@dataclass
class Bin(Generic[U]):
    devices: int  # the runner's
    units: list[U]


def rebalance(bins: list[Bin[U]], wall: Callable[[Sequence[U], int], float]) -> None:
    """Move units between ``bins`` in place until no move lowers the slowest wall."""
    if sum(len(b.units) for b in bins) > MAX_REBALANCED_UNITS or len(bins) < 2:
        return
    walls = [wall(b.units, b.devices) for b in bins]
    for _ in range(4 * sum(len(b.units) for b in bins)):  # each move strictly lowers a wall
        slowest = max(range(len(bins)), key=lambda i: (walls[i], -i))
        move = _best_move(bins, walls, slowest, wall)
        if move is None:
            return
        unit_index, target, source_wall, target_wall = move
        unit = bins[slowest].units.pop(unit_index)
        bins[target].units.append(unit)
        bins[target].units.sort(key=lambda u: u.key)
        walls[slowest], walls[target] = source_wall, target_wall


def _best_move(
    bins: list[Bin[U]],
    walls: list[float],
    slowest: int,
    wall: Callable[[Sequence[U], int], float],
) -> tuple[int, int, float, float] | None:
    source = bins[slowest]
    best: tuple[float, int, int, float, float] | None = None
    if len(source.units) < 2:
        return None  # a job is never emptied: the matrix keeps the jobs it was given
    for unit_index, unit in enumerate(source.units):
        rest = source.units[:unit_index] + source.units[unit_index + 1 :]
        rest_wall = wall(rest, source.devices)
        for target, candidate in enumerate(bins):
            if target == slowest or candidate.devices < unit.devices:
                continue
            if candidate.devices != source.devices and not (
                unit.movable_up and candidate.devices > source.devices
            ):
                continue
            grown = wall([*candidate.units, unit], candidate.devices)
            worst = max(rest_wall, grown)
            if worst < walls[slowest] - 1e-9 and (best is None or worst < best[0] - 1e-9):
                best = (worst, unit_index, target, rest_wall, grown)
    if best is None:
        return None
    return best[1], best[2], best[3], best[4]
