"""Pooled tests for the forwarded-args run: a fault that poison-skips the victims behind it.

The fault comes from outside (``--simpler-sim-fault hang@TestTrigger#1``) into the
trigger-then-victims suite (tests/it/trigger_victims.py); ``TestDeselected`` is named by
``--deselect`` and must never run in any process.
"""

from trigger_victims import FORWARDED

TestTrigger, TestVictim1, TestVictim2 = FORWARDED.classes()


class TestDeselected:
    def test_never_runs(self, worker):
        raise AssertionError("--deselect was not honoured")
