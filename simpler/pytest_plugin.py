"""simpler's pytest plugin: tells the device runner which test is running.

Loaded through the ``pytest11`` entry point. It never imports cppyy itself:
the runner loads only when a test opens a device.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

from simpler import runner

__all__ = ["pytest_runtest_call"]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    runner.set_test_context(item.nodeid, _attempt())
    try:
        return (yield)
    finally:
        runner.set_test_context("", _attempt())


def _attempt() -> int:
    text = os.environ.get("SIMPLER_ATTEMPT", "1")
    return int(text) if text.isascii() and text.isdigit() and int(text) >= 1 else 1
