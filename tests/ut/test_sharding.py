"""--shard I/N: every test in exactly one shard, the same split in every matrix job, balanced."""

from __future__ import annotations

import pytest

from simpler.split.listing import ResourceTest, SuiteListing
from simpler.split.sharding import parse_shard, split_suite


def _suite() -> SuiteListing:
    l2 = [f"tests/st/test_f{f}.py::TestC::test_{t}" for f in range(7) for t in range(f + 1)]
    resource = [
        ResourceTest(f"tests/st/test_r.py::test_{i}", 1 + i % 3, float(i + 1), None)
        for i in range(5)
    ]
    return SuiteListing(l2=l2, resource=resource)


def _units(shards: list) -> list[str]:
    return [f for s in shards for f in s.l2_files] + [t.nodeid for s in shards for t in s.resource]


@pytest.mark.parametrize("count", [1, 2, 3, 5, 20])
def test_every_file_and_resource_test_lands_in_exactly_one_shard(count: int) -> None:
    suite = _suite()
    units = _units(split_suite(suite, count, {}, pool_size=4))
    expected = list(suite.l2_files()) + [t.nodeid for t in suite.resource]
    assert sorted(units) == sorted(expected)
    assert len(units) == len(set(units))


def test_the_split_is_the_same_every_time() -> None:
    first = split_suite(_suite(), 3, {"file:tests/st/test_f0.py": 9.0}, pool_size=4)
    again = split_suite(_suite(), 3, {"file:tests/st/test_f0.py": 9.0}, pool_size=4)
    assert [(s.l2_files, s.resource) for s in first] == [(s.l2_files, s.resource) for s in again]


def test_longest_first_balances_the_estimates() -> None:
    durations = {
        f"file:tests/st/test_f{f}.py": float(w) for f, w in enumerate([8, 7, 6, 5, 4, 4, 2])
    }
    suite = SuiteListing(l2=[f"tests/st/test_f{f}.py::t" for f in range(7)])
    loads = [s.estimate_s for s in split_suite(suite, 3, durations, pool_size=1)]
    assert loads == [12.0, 13.0, 11.0]  # 8+4 | 7+4+2 | 6+5
    lower_bound = max(sum(durations.values()) / 3, 8.0)
    assert max(loads) <= 4 / 3 * lower_bound  # longest-first's guarantee


def test_more_shards_than_units_leaves_the_extra_shards_empty() -> None:
    suite = SuiteListing(l2=["tests/st/test_a.py::t"])
    shards = split_suite(suite, 3, {}, pool_size=1)
    assert [s.empty for s in shards] == [False, True, True]


@pytest.mark.parametrize("text", ["0/3", "4/3", "1", "a/b", "1/0", "-1/2", ""])
def test_bad_shard_specs_are_named(text: str) -> None:
    with pytest.raises(ValueError, match="expected I/N"):
        parse_shard(text)
