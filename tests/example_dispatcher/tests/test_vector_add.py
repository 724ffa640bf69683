"""Element-wise add on the host_build_graph runtime."""

import numpy as np


class TestVectorAdd:
    _st_runtime = "host_build_graph"
    CASES = {
        "Small": {"shape": (128,)},
        "Tiled": {"shape": (64, 256)},
        "Ragged": {"shape": (1001,)},
        # Sized for a real card's memory: not worth simulating.
        "Huge": {"shape": (1 << 28,), "platforms": ["a2a3"]},
    }

    def test_run(self, st_worker, case):
        rng = np.random.default_rng(0)
        a, b = (rng.standard_normal(self.CASES[case]["shape"]) for _ in range(2))
        np.testing.assert_allclose(st_worker.run("vector_add", a, b), a + b)
