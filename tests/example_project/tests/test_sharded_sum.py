"""A column sum split across two chips: a Resource test, on the devices simpler allocates."""

import numpy as np

from chipsim import MultiChipSceneTestCase, scene_test


@scene_test(level=3, runtime="host_build_graph")
class TestShardedSum(MultiChipSceneTestCase):
    KERNEL = "reduce_sum"
    CASES = [
        {
            "name": "TwoChips",
            "platforms": ["chipsim", "a2a3"],
            "config": {"device_count": 2},
            "params": {"rows": 256, "cols": 64},
        },
    ]

    def generate_args(self, params):
        full = np.random.default_rng(3).standard_normal((params["rows"], params["cols"]))
        return list(np.split(full, 2))

    def combine(self, outputs):
        return np.sum(outputs, axis=0)

    def compute_golden(self, args, params):
        return np.concatenate(args).sum(axis=0)
