"""Work for the other xdist worker while the crashed one is replaced (see scenario_crash.py)."""

import time

import pytest

pytestmark = pytest.mark.runtime("host_build_graph")


@pytest.mark.parametrize("step", range(4))
def test_busy(worker, step):
    worker.run("noop")
    time.sleep(0.5)
