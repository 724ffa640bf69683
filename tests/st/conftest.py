"""Scene-suite fixtures: each test draws its inputs from its own seeded generator."""

from __future__ import annotations

import zlib

import numpy as np
import pytest


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    """A generator seeded from the test's node id: the same inputs in every run and order."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
