"""Collect the suite once, up front, without running it: which tests are L2, which need devices.

``simpler run`` needs this before anything starts: a Resource test that can never
fit the pool is a usage error, and ``--shard`` splits the suite it collected.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simpler.orchestrator.pytest_args import PYTEST_NO_TESTS, collection_argv
from simpler.reporting.nodeids import file_of

__all__ = ["ListingError", "ResourceTest", "SuiteListing", "collect_suite"]


class ListingError(RuntimeError):
    """The suite could not be collected."""


@dataclass(frozen=True)
class ResourceTest:
    nodeid: str
    devices: int
    est_s: float | None
    timeout_s: float | None


@dataclass
class SuiteListing:
    l2: list[str] = field(default_factory=list)  # node ids of the pooled tests
    resource: list[ResourceTest] = field(default_factory=list)

    def l2_files(self) -> dict[str, list[str]]:
        files: dict[str, list[str]] = {}
        for nodeid in self.l2:
            files.setdefault(file_of(nodeid), []).append(nodeid)
        return files


def collect_suite(platform: str, devices: list[int], pytest_args: list[str]) -> SuiteListing:
    """Run pytest's collection (not the tests) and read what the plugin listed."""
    with tempfile.TemporaryDirectory(prefix="simpler-collect-") as folder:
        listing = Path(folder) / "suite.json"
        argv = collection_argv(platform, devices, str(listing), pytest_args)
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode not in (0, PYTEST_NO_TESTS) or not listing.exists():
            last = (done.stdout + done.stderr).strip().splitlines()[-1:] or ["no output"]
            raise ListingError(f"collecting the suite failed: {last[0]}")
        entries = json.loads(listing.read_text())
    suite = SuiteListing()
    for entry in entries:
        if entry["devices"] is None:
            suite.l2.append(entry["nodeid"])
        else:
            suite.resource.append(_resource_test(entry))
    return suite


def _resource_test(entry: dict[str, Any]) -> ResourceTest:
    count = entry["devices"]
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(
            f"{entry['nodeid']}: device_count must be a positive integer, got {count!r}"
        )
    return ResourceTest(
        entry["nodeid"], count, _seconds(entry, "est_s"), _seconds(entry, "timeout_s")
    )


def _seconds(entry: dict[str, Any], key: str) -> float | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"{entry['nodeid']}: device_count {key[:-2]}= must be positive seconds")
    return float(value)
