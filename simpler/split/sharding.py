"""Split a suite over N CI matrix jobs: L2 files and Resource tests, balanced by estimate.

Longest-first onto the least-loaded shard (ties: the lowest shard index), with
units ordered by name among equals, so every job of the matrix computes the same
split and every test lands in exactly one shard.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from simpler.split.listing import ResourceTest, SuiteListing

__all__ = [
    "DEFAULT_RESOURCE_S",
    "DEFAULT_TEST_S",
    "Shard",
    "ShardSpec",
    "parse_shard",
    "split_suite",
]

DEFAULT_TEST_S = 1.0  # an L2 test nobody has timed yet
DEFAULT_RESOURCE_S = 30.0


@dataclass(frozen=True)
class ShardSpec:
    index: int  # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass
class Shard:
    l2_files: list[str] = field(default_factory=list)
    resource: list[ResourceTest] = field(default_factory=list)
    estimate_s: float = 0.0

    @property
    def empty(self) -> bool:
        return not self.l2_files and not self.resource


def parse_shard(text: str) -> ShardSpec:
    match = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise ValueError(f"bad shard {text!r}: expected I/N with 1 <= I <= N, e.g. 2/4")
    return ShardSpec(int(match[1]), int(match[2]))


def split_suite(
    suite: SuiteListing, count: int, durations: Mapping[str, float], pool_size: int
) -> list[Shard]:
    """``count`` shards covering ``suite`` exactly once, balanced by estimated seconds."""
    units: list[tuple[float, str, str | ResourceTest]] = []
    for path, nodeids in suite.l2_files().items():
        default = DEFAULT_TEST_S * len(nodeids)
        units.append((durations.get(f"file:{path}", default), path, path))
    for test in suite.resource:
        seconds = test.est_s or durations.get(test.nodeid, DEFAULT_RESOURCE_S)
        # A shard runs its Resource tests on its whole pool at once: weigh by its share of it.
        units.append((seconds * test.devices / max(pool_size, 1), test.nodeid, test))
    shards = [Shard() for _ in range(count)]
    for seconds, _, unit in sorted(units, key=lambda u: (-u[0], u[1])):
        lightest = min(range(count), key=lambda i: (shards[i].estimate_s, i))
        target = shards[lightest]
        target.estimate_s += seconds
        if isinstance(unit, str):
            target.l2_files.append(unit)
        else:
            target.resource.append(unit)
    return shards
