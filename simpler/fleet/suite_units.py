"""The units of a collected suite, for the plan: each L2 file (one device, the file's tests
run together) and each Resource test (its own device count), with the time to plan on.

A time comes from the durations file, else the test's own estimate (``est_s``), else the
count of its tests times the defaults ``--shard`` balances on (docs/fleet.md, "Times").
"""

from __future__ import annotations

from collections.abc import Mapping

from simpler.fleet.planner import Unit
from simpler.scheduler.durations import Measured
from simpler.split.listing import SuiteListing
from simpler.split.sharding import DEFAULT_RESOURCE_S, DEFAULT_TEST_S

__all__ = ["suite_units"]


def suite_units(listing: SuiteListing, durations: Mapping[str, Measured]) -> list[Unit]:
    units = []
    for path, nodeids in listing.l2_files().items():
        whole = durations.get(f"file:{path}")
        parts = [durations.get(nodeid) for nodeid in nodeids]
        if whole is not None:
            units.append(Unit(path, 1, whole.seconds, "durations", phase="l2"))
        elif all(part is not None for part in parts):
            units.append(Unit(path, 1, sum(p.seconds for p in parts if p), "durations", phase="l2"))
        else:
            units.append(Unit(path, 1, len(nodeids) * DEFAULT_TEST_S, "count", phase="l2"))
    for test in listing.resource:
        measured = durations.get(test.nodeid)
        if measured is not None:
            seconds, source = measured.seconds, "durations"
        elif test.est_s is not None:
            seconds, source = test.est_s, "estimate"
        else:
            seconds, source = DEFAULT_RESOURCE_S, "count"
        units.append(Unit(test.nodeid, test.devices, seconds, source, phase="resource"))
    return units
