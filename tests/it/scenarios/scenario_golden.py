"""A wrong result on a healthy card, then a class that must run on the same worker."""

import numpy as np
import pytest

from simpler import GoldenMismatch

pytestmark = pytest.mark.runtime("tensormap_and_ringbuffer")


class TestWrongGolden:
    def test_add_against_a_wrong_golden(self, worker):
        out = worker.run("vector_add", np.ones(3, np.float32), np.ones(3, np.float32))
        golden = np.full(3, 5, np.float32)
        if not np.array_equal(out, golden):
            raise GoldenMismatch(f"vector_add: got {out.tolist()}, golden {golden.tolist()}")


class TestAfterMismatch:
    def test_noop(self, worker):
        worker.run("noop")
