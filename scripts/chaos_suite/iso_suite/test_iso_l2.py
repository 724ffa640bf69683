"""L2: two quick tests on pooled device workers."""

import pytest

pytestmark = pytest.mark.runtime("host_build_graph")


def test_noop(worker):
    worker.run("noop")


def test_noop_again(worker):
    worker.run("noop")
