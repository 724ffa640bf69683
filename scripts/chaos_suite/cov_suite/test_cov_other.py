"""L2: a file of its own, so that the second xdist worker has work too."""

import pytest
from measured import paths

pytestmark = pytest.mark.runtime("host_build_graph")


class TestOther:
    def test_other(self, worker):
        worker.run("noop")
        assert paths.in_other_file() == 6
