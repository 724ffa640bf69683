"""Row-wise softmax on the aicpu_build_graph runtime."""

import numpy as np

from chipsim import SceneTestCase, scene_test


@scene_test(level=2, runtime="aicpu_build_graph")
class TestSoftmax(SceneTestCase):
    KERNEL = "softmax"
    RTOL = 1e-6
    CASES = [
        {"name": "OneRow", "platforms": ["chipsim", "a2a3"], "params": {"rows": 1, "cols": 64}},
        {"name": "Batch", "platforms": ["chipsim", "a2a3"], "params": {"rows": 32, "cols": 512}},
    ]

    def generate_args(self, params):
        rng = np.random.default_rng(1)
        return [rng.standard_normal((params["rows"], params["cols"])) * 4.0]

    def compute_golden(self, args, params):
        (x,) = args
        exp = np.exp(x - x.max(axis=1)[:, None])
        return exp / exp.sum(axis=1)[:, None]
