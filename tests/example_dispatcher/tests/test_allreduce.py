"""A column sum across chips: a level-3 class, sized by its CASES, on the level-3 worker."""

import numpy as np


class TestAllReduce:
    _st_runtime = "host_build_graph"
    _st_level = 3
    CASES = {"TwoChips": {"device_count": 2, "rows": 256, "cols": 64}}

    def test_run(self, st_worker, case):
        params = self.CASES[case]
        full = np.random.default_rng(3).standard_normal((params["rows"], params["cols"]))
        shards = np.split(full, params["device_count"])
        outputs = st_worker.run_sharded("reduce_sum", shards)
        np.testing.assert_allclose(np.sum(outputs, axis=0), full.sum(axis=0))
