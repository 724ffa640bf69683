"""A test that kills its xdist worker (``os._exit``) early in L2, with tests queued behind it.

It crashes on the first attempt only, so the retry phase's fresh process sees it pass. The
class has the most tests of the crash scenarios, so xdist hands its file out first. A
replacement worker that starts one of the tests queued behind the crash says so, for the
neighbours that wait for it (crash_handoff.py).
"""

import os

import crash_handoff
import pytest

pytestmark = pytest.mark.runtime("host_build_graph")


class TestCrash:
    def test_before(self, worker):
        worker.run("noop")

    def test_crash(self, worker):
        worker.run("noop")
        if os.environ.get("SIMPLER_ATTEMPT", "1") == "1":
            os._exit(1)

    @pytest.mark.parametrize("step", range(4))
    def test_after(self, worker, step):
        crash_handoff.announce()
        worker.run("noop")
