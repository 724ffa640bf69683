"""A suite for the nothing-ran checks: NOTHING_RAN_MODE=skip skips every test (two reasons);
NOTHING_RAN_MODE=block lets the first test pass and blocks the second until the run is
stopped (it writes NOTHING_RAN_MARK first), so three planned tests never get a verdict."""

import os
import time
from pathlib import Path

import pytest

MODE = os.environ.get("NOTHING_RAN_MODE", "skip")


@pytest.fixture(autouse=True)
def _skip_all() -> None:
    if MODE == "skip":
        pytest.skip("--platform required")


@pytest.mark.parametrize("n", range(6))
def test_on_the_device(worker, n):
    worker.run("noop")
    if n == 1 and MODE == "block":
        Path(os.environ["NOTHING_RAN_MARK"]).write_text("blocked")
        deadline = time.monotonic() + 120  # a hang guard: the run is stopped long before
        while time.monotonic() < deadline:
            time.sleep(0.2)


@pytest.mark.skipif(MODE == "skip", reason="no second card")
@pytest.mark.parametrize("n", range(3))
def test_second_card(worker, n):
    worker.run("noop")
