"""The arithmetic of a test's scores: its interval, its flips, where its failures fell, its state.

Pure functions of counts and positions, so that each rule of the scores (docs/history.md,
"How the scores are counted") is one function a test can pin down without a database
(``simpler.history.scores`` gathers the numbers, this module judges them).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping

__all__ = [
    "CHANCE_LIMIT",
    "MIN_CONCENTRATED_FAILURES",
    "WILSON_Z",
    "chance_on_one_place",
    "concentrated_place",
    "flip_count",
    "state_of",
    "wilson_interval",
]

WILSON_Z = 1.96  # a 95% interval
# Device-sensitive needs at least this many failing runs, all on one place ...
MIN_CONCENTRATED_FAILURES = 2
# ... and that many failures would land on one place by luck alone less often than this.
CHANCE_LIMIT = 0.05


def wilson_interval(failures: int, trials: int, z: float = WILSON_Z) -> tuple[float, float]:
    """The Wilson score interval of ``failures / trials``.

    Why Wilson rather than ``p +- z*sqrt(p(1-p)/n)``: with few runs, or none failed, the
    naive interval collapses to [0, 0] ("never flaky") or spills below 0; Wilson's stays in
    [0, 1] and stays wide while the evidence is thin, which is what a reader deciding on
    20 runs needs. No trials at all: nothing is known, the interval is [0, 1].
    """
    if trials <= 0:
        return 0.0, 1.0
    p = failures / trials
    z2 = z * z
    denominator = 1 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def flip_count(failed_positions: Collection[int], length: int) -> int:
    """Changes of status between consecutive runs of a sequence of ``length`` runs in which
    the runs at ``failed_positions`` (0-based) failed and the others did not.

    Computed from the failed positions alone: every change has exactly one failed side, so
    each failed run counts its neighbours that did not fail. A test that failed in 2 runs of
    200 costs 2 look-ups, not a walk over 200 runs.
    """
    failed = set(failed_positions)
    return sum(
        (position > 0 and position - 1 not in failed)
        + (position < length - 1 and position + 1 not in failed)
        for position in failed
    )


def chance_on_one_place(spread: Mapping[str | None, int], failures: int) -> float:
    """How likely ``failures`` independent failures all land on one place, if each lands on a
    place as often as the test ran there (``spread``: the test's runs per place)."""
    total = sum(spread.values())
    if total <= 0:
        return 1.0
    return sum((count / total) ** failures for count in spread.values())


def concentrated_place(
    failure_places: Collection[str | None],
    failing_runs: int,
    spread: Mapping[str | None, int],
) -> str | None:
    """The one place where all of a test's own failures fell, when that is no coincidence.

    ``failure_places``: each failure's place (a card, a runner label), ``None`` where
    unknown; ``failing_runs``: the runs they fell in; ``spread``: the test's runs per place.
    Needs :data:`MIN_CONCENTRATED_FAILURES` failing runs, all on one known place, runs
    elsewhere too, and below :data:`CHANCE_LIMIT` by luck (docs/history.md, Device-sensitive).
    """
    places = set(failure_places)
    if failing_runs < MIN_CONCENTRATED_FAILURES or len(places) != 1:
        return None
    (place,) = places
    if place is None:
        return None
    if sum(1 for where, count in spread.items() if count > 0 and where is not None) < 2:
        return None
    if chance_on_one_place(spread, failing_runs) >= CHANCE_LIMIT:
        return None
    return place


def state_of(*, failed_test: int, passed: int, device_sensitive: bool) -> str:
    """``stable``, ``broken``, ``device-sensitive`` or ``flaky`` (the scores' docstring)."""
    if failed_test == 0:
        return "stable"
    if passed == 0:
        return "broken"
    if device_sensitive:
        return "device-sensitive"
    return "flaky"
