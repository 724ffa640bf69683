"""An op that cannot be stopped in process, then three classes queued behind it on its worker.

The fault is injected from outside (``--simpler-sim-fault stuck@TestTrigger#1``), so the
trigger's code is an ordinary launch, as in a real suite. With ``SCENARIO_STUCK_CAUGHT=1``
the trigger's first attempt expects the device error and passes: the card is stuck all the
same.
"""

import os

import numpy as np
import pytest

from simpler import DeviceRuntimeError

pytestmark = pytest.mark.runtime("host_build_graph")


def _add(worker):
    out = worker.run("vector_add", np.ones(4, np.float32), np.full(4, 2, np.float32))
    assert out.tolist() == [3.0] * 4


class TestTrigger:
    def test_launch(self, worker):
        first = os.environ.get("SIMPLER_ATTEMPT", "1") == "1"
        if first and os.environ.get("SCENARIO_STUCK_CAUGHT") == "1":
            with pytest.raises(DeviceRuntimeError):
                _add(worker)
            return
        _add(worker)


class TestVictim1:
    def test_noop(self, worker):
        worker.run("noop")


class TestVictim2:
    def test_add(self, worker):
        _add(worker)


class TestVictim3:
    def test_noop(self, worker):
        worker.run("noop")
