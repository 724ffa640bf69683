"""Resource tests: each runs in a child process of its own, on the devices the scheduler gave it."""

from __future__ import annotations

import numpy as np
import pytest
from golden import assert_matches_golden

from simpler.runner import open_runner


def _runners(platform, devices):
    runners = [open_runner(platform, d) for d in devices]
    for runner in runners:
        runner.init()
    return runners


@pytest.mark.device_count(2, est=2.0)
class TestDataParallelMatmul:
    def test_each_device_computes_its_shard_of_the_batch(self, simpler_platform, devices, rng):
        assert len(devices) == 2 and len(set(devices)) == 2
        a = rng.standard_normal((64, 32), dtype=np.float32)
        b = rng.standard_normal((32, 16), dtype=np.float32)
        shards = np.array_split(a, len(devices))
        runners = _runners(simpler_platform, devices)
        out = np.vstack([r.run("matmul", s, b) for r, s in zip(runners, shards, strict=True)])
        assert_matches_golden("sharded matmul 64x32 @ 32x16", out, a @ b, rtol=1e-4, atol=1e-4)
        assert all(r.finalize() == 0 for r in runners)


@pytest.mark.device_count(2, est=2.0)
class TestAllReduceSum:
    def test_partial_sums_on_every_device_reduce_to_the_total(self, simpler_platform, devices, rng):
        parts = [rng.standard_normal(256, dtype=np.float32) for _ in devices]
        runners = _runners(simpler_platform, devices)
        total = parts[0]
        for runner, part in zip(runners[1:], parts[1:], strict=True):
            total = runner.run("vector_add", total, part)
        expected = np.sum(np.stack(parts), axis=0, dtype=np.float32)
        assert_matches_golden(
            "all-reduce sum over 2 devices", total, expected, rtol=1e-5, atol=1e-5
        )


@pytest.mark.device_count(1, est=1.0)
class TestSingleDeviceSoftmax:
    def test_softmax_on_the_allocated_device(self, simpler_platform, devices, rng):
        (runner,) = _runners(simpler_platform, devices)
        x = rng.standard_normal((8, 32), dtype=np.float32)
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        assert_matches_golden(
            "softmax 8x32",
            runner.run("softmax", x),
            e / e.sum(-1, keepdims=True),
            rtol=1e-5,
            atol=1e-6,
        )
