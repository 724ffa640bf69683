"""Copied by the bench into four files, one per xdist worker: a fault first, then three victims.

Each test holds its device for DEVICE_S, as a real kernel keeps the host waiting on the card:
that wait, not the interpreter's start-up, is what spreading fresh processes over devices buys.
"""

import time

import pytest

pytestmark = pytest.mark.runtime("bench")
DEVICE_S = 0.5


def _kernel(worker):
    worker.run("noop")
    time.sleep(DEVICE_S)


class TestFault:
    def test_launch(self, worker):
        _kernel(worker)


@pytest.mark.parametrize("case", range(3))
class TestVictim:
    def test_case(self, worker, case):
        _kernel(worker)
