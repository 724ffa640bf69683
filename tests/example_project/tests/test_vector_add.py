"""Element-wise add on the host_build_graph runtime."""

import numpy as np

from chipsim import SceneTestCase, scene_test


@scene_test(level=2, runtime="host_build_graph")
class TestVectorAdd(SceneTestCase):
    KERNEL = "vector_add"
    CASES = [
        {"name": "Small", "platforms": ["chipsim", "a2a3"], "params": {"shape": (128,)}},
        {"name": "Tiled", "platforms": ["chipsim", "a2a3"], "params": {"shape": (64, 256)}},
        {"name": "Ragged", "platforms": ["chipsim", "a2a3"], "params": {"shape": (1001,)}},
        # Sized for a real card's memory: not worth simulating.
        {"name": "Huge", "platforms": ["a2a3"], "params": {"shape": (1 << 28,)}},
    ]

    def generate_args(self, params):
        rng = np.random.default_rng(0)
        shape = params["shape"]
        return [rng.standard_normal(shape), rng.standard_normal(shape)]

    def compute_golden(self, args, params):
        a, b = args
        return a + b
