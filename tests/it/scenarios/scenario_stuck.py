"""An op that cannot be stopped in process, then three classes queued behind it on its worker.

The fault is injected from outside (``--simpler-sim-fault stuck@TestTrigger#1``), so the
trigger's code is an ordinary launch, as in a real suite. With ``SCENARIO_STUCK_CAUGHT=1``
the trigger's first attempt expects the device error and passes: the card is stuck all the
same. The victims are those of the trigger-then-victims suite (tests/it/trigger_victims.py).
"""

import os

import pytest
from trigger_victims import STUCK, add

from simpler import DeviceRuntimeError

pytestmark = pytest.mark.runtime("host_build_graph")


class TestTrigger:
    def test_launch(self, worker):
        first = os.environ.get("SIMPLER_ATTEMPT", "1") == "1"
        if first and os.environ.get("SCENARIO_STUCK_CAUGHT") == "1":
            with pytest.raises(DeviceRuntimeError):
                add(worker)
            return
        add(worker)


TestVictim1, TestVictim2, TestVictim3 = STUCK.victim_classes()
