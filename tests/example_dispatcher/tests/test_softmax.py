"""Row-wise softmax on the aicpu_build_graph runtime."""

import numpy as np


class TestSoftmax:
    _st_runtime = "aicpu_build_graph"
    CASES = {"OneRow": {"rows": 1, "cols": 64}, "Batch": {"rows": 32, "cols": 512}}

    def test_run(self, st_worker, case):
        params = self.CASES[case]
        x = np.random.default_rng(1).standard_normal((params["rows"], params["cols"])) * 4.0
        golden = np.exp(x - x.max(axis=1)[:, None])
        golden /= golden.sum(axis=1)[:, None]
        np.testing.assert_allclose(st_worker.run("softmax", x), golden, rtol=1e-6)
