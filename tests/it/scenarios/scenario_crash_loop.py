"""Every test kills its xdist worker: replacements crash one after another (a crash loop)."""

import os

import pytest

pytestmark = pytest.mark.runtime("host_build_graph")


@pytest.mark.parametrize("step", range(7))
def test_crashes_every_time(worker, step):
    worker.run("noop")
    os._exit(1)
