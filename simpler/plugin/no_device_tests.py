"""Which L2 tests use no device, as ``simpler run`` tells an L2 session: a file of node ids,
one a line (``--simpler-no-device-tests``), from its up-front collection.

The xdist controller reads it to send those tests to workers that hold no device, and to
judge a crash: a test that uses no device poisons no worker when its process dies.
"""

from __future__ import annotations

import pytest

from simpler.plugin.listed_tests import listed_tests

__all__ = ["known_to_use_no_device", "no_device_tests"]


def no_device_tests(config: pytest.Config) -> frozenset[str] | None:
    """The node ids the file names; None when this session was told nothing (not under
    ``simpler run``'s L2 phase, or a suite it could not collect up front)."""
    return listed_tests(config, "simpler_no_device_tests")


def known_to_use_no_device(config: pytest.Config, nodeid: str) -> bool:
    """Whether this session was told that ``nodeid`` uses no device (``nodeid`` as xdist
    names it: ``--dist loadgroup`` appends ``@group`` to a test's id)."""
    tests = no_device_tests(config)
    return tests is not None and (nodeid in tests or nodeid.rpartition("@")[0] in tests)
