"""A device fault in the first class, then five classes on the same pooled worker.

The fault is injected from outside (``--simpler-sim-fault hang@TestTrigger``); the classes
are the trigger-then-victims suite (tests/it/trigger_victims.py).
"""

import pytest
from trigger_victims import HANG

pytestmark = pytest.mark.runtime("host_build_graph")

TestTrigger, TestVictim1, TestVictim2, TestVictim3, TestVictim4, TestVictim5 = HANG.classes()
