"""L2: a test that SIGKILLs its xdist worker on its first attempt, between two that pass."""

import os
import signal

import pytest
from measured import paths

pytestmark = pytest.mark.runtime("host_build_graph")


class TestCrash:
    def test_before(self, worker):
        worker.run("noop")
        assert paths.before_crash() == 6

    def test_crash(self, worker):
        worker.run("noop")
        if os.environ.get("SIMPLER_ATTEMPT") == "1":
            os.kill(os.getpid(), signal.SIGKILL)  # no atexit, no handler: nothing saved now

    def test_after(self, worker):
        worker.run("noop")
        assert paths.after_crash() == 9
