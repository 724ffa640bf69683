"""Device specs as users write them, and every malformed one named."""

from __future__ import annotations

import pytest

from simpler.devices import format_devices, parse_devices


@pytest.mark.parametrize(
    ("spec", "ids"),
    [
        ("0", [0]),
        ("0-7", list(range(8))),
        ("0,2,5", [0, 2, 5]),
        ("0,2-4,7", [0, 2, 3, 4, 7]),
        (" 3 , 1 ", [1, 3]),
        ("2,2,1-2", [1, 2]),
    ],
)
def test_specs_name_the_devices(spec: str, ids: list[int]) -> None:
    assert parse_devices(spec) == ids


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        ("0-", "'0-'"),
        ("a", "'a'"),
        ("3-1", "runs backwards"),
        ("-1", "'-1'"),
        ("", "empty"),
        ("0,,1", "''"),
        ("1.5", "'1.5'"),
    ],
)
def test_bad_specs_are_named(spec: str, names: str) -> None:
    with pytest.raises(ValueError, match=names):
        parse_devices(spec)


@pytest.mark.parametrize(("ids", "spec"), [([0, 1, 2, 5], "0-2,5"), ([4, 5], "4-5"), ([3], "3")])
def test_ids_format_back_to_the_shortest_spec(ids: list[int], spec: str) -> None:
    assert format_devices(ids) == spec
    assert parse_devices(spec) == ids
