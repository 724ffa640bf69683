"""Eight of the sixteen tests of the fault scenario: the bench copies this file twice, so
that each of the two devices takes one. The fault is injected from outside (a hang)."""

import numpy as np
import pytest

pytestmark = pytest.mark.runtime("bench")


@pytest.mark.parametrize("case", range(8))
class TestOps:
    def test_vector_add(self, worker, case):
        a = np.full(256, case, np.float32)
        out = worker.run("vector_add", a, np.ones(256, np.float32))
        assert out.tolist() == (a + 1).tolist()
