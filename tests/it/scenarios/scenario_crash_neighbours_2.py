"""The twin of scenario_crash_neighbours_1.py: the same test, a file of its own for xdist."""

import crash_handoff
import pytest

pytestmark = pytest.mark.runtime("host_build_graph")

test_busy = crash_handoff.busy_neighbour
