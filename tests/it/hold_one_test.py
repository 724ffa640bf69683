"""A pytest plugin for the tests of signals (``-p hold_one_test``): the test named by
``HOLD_ONE_TEST`` waits in Python, where a signal reaches it at once, so that a run cannot
end before the signal its test sends, however fast or loaded the machine is. The wait's own
limit only guards against a hang."""

from __future__ import annotations

import os
import time

import pytest

HOLD_S = 120.0


def pytest_runtest_call(item: pytest.Item) -> None:
    if item.name == os.environ.get("HOLD_ONE_TEST"):
        held_until = time.monotonic() + HOLD_S
        while time.monotonic() < held_until:
            time.sleep(0.05)
