"""A key-value cache written by one test and read by the next, in one class-scoped worker."""

import numpy as np

KEYS = np.arange(64.0).reshape(8, 8)


class TestKvCache:
    _st_runtime = "host_build_graph"

    def test_write(self, st_worker):
        st_worker.store("keys", st_worker.run("scale2", KEYS))

    def test_read(self, st_worker):
        np.testing.assert_allclose(st_worker.load("keys"), 2 * KEYS)
