"""These tests keep state in their worker from one test to the next: each class gets a worker
of its own, never one shared with other classes."""

import pytest

from stsim import open_worker


@pytest.fixture(scope="class")
def st_worker(request):
    device = int(request.config.option.device.split(",")[0].split("-")[0])
    worker = open_worker(device, request.config.getoption("platform"), "host_build_graph")
    yield worker
    worker.close()
