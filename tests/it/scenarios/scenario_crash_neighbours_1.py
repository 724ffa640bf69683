"""Work for the other xdist worker while the crashed one is replaced (see scenario_crash.py).

Under test_worker_crash's first test, each holds its worker until the replacement has started a
test (crash_handoff.py); elsewhere (the crash loop) it runs at once. Its twin,
scenario_crash_neighbours_2.py, is the file ``--dist loadfile`` hands the other survivor.
"""

import crash_handoff
import pytest

pytestmark = pytest.mark.runtime("host_build_graph")

test_busy = crash_handoff.busy_neighbour
