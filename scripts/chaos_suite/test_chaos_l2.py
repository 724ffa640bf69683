"""Chaos suite, L2 part: one trigger class the faults aim at, then victims on the same worker."""

import os

import numpy as np
import pytest

pytestmark = pytest.mark.runtime("host_build_graph")
# CHAOS_RUNTIMES=neighbour: the trigger and TestVictimB run a second runtime, so that its
# worker is open on the device before TestVictimA faults under the first one.
NEIGHBOUR = "aicpu_build_graph" if os.environ.get("CHAOS_RUNTIMES") == "neighbour" else None


def _add(worker):
    out = worker.run("vector_add", np.ones(8, np.float32), np.full(8, 2, np.float32))
    assert out.tolist() == [3.0] * 8


@pytest.mark.runtime(NEIGHBOUR or "host_build_graph")
class TestTrigger:
    def test_launch(self, worker):
        _add(worker)


class TestVictimA:
    def test_add(self, worker):
        _add(worker)


# CHAOS_RUNTIMES=2: this class needs a second runtime on the same device, which a device
# context that holds one runtime gets only by retiring the first one's worker.
@pytest.mark.runtime(
    "aicpu_build_graph"
    if os.environ.get("CHAOS_RUNTIMES") in ("2", "neighbour")
    else "host_build_graph"
)
class TestVictimB:
    def test_matmul(self, worker):
        a = np.eye(4, dtype=np.float32)
        assert (worker.run("matmul", a, a) == a).all()


class TestVictimC:
    def test_noop(self, worker):
        worker.run("noop")


class TestWorkerCrash:
    def test_crash(self, worker):
        # The xdist worker dies under the test (a driver segfault, an os._exit): only in the
        # worker-crash scenario, and only on the first attempt.
        worker.run("noop")
        if os.environ.get("CHAOS_L2") == "crash" and os.environ.get("SIMPLER_ATTEMPT") == "1":
            os._exit(1)
