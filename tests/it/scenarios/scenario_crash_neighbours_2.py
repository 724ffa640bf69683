"""Work for the other xdist worker while the crashed one is replaced (see scenario_crash.py).

Under test_worker_crash's first test, each holds its worker until the replacement has started a
test (crash_handoff.py); elsewhere (the crash loop) it runs at once.
"""

import crash_handoff
import pytest

pytestmark = pytest.mark.runtime("host_build_graph")


@pytest.mark.parametrize("step", range(4))
def test_busy(worker, step):
    worker.run("noop")
    crash_handoff.hold_until_a_replacement_started()
