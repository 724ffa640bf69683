"""Resource tests: each runs in a child process of its own, on the devices the scheduler gave it.

Every device a test is given runs the kernel, and each device's own answer is checked against
numpy, so a wrong card fails the test by name.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from golden import assert_matches_golden, matmul_atol, matmul_golden, softmax_golden

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
        for device, runner, shard in zip(devices, runners, shards, strict=True):
            # A row of A @ B needs only that row of A: each shard has a golden of its own.
            assert_matches_golden(
                f"matmul shard {shard.shape[0]}x32 @ 32x16 on device {device}",
                runner.run("matmul", shard, b),
                matmul_golden(shard, b),
                atol=matmul_atol(shard, b),
            )
        assert all(r.finalize() == 0 for r in runners)


@pytest.mark.device_count(2, est=2.0)
class TestAllReduceSum:
    def test_partial_sums_on_every_device_reduce_to_the_total(self, simpler_platform, devices, rng):
        parts = [rng.standard_normal(256, dtype=np.float32) for _ in devices]
        runners = _runners(simpler_platform, devices)
        # Every device adds the gathered parts in rank order, as a deterministic all-reduce
        # does: the same float32 adds as numpy's, so every device must hold the same bits.
        expected = functools.reduce(np.add, parts)
        for device, runner in zip(devices, runners, strict=True):
            total = parts[0]
            for part in parts[1:]:
                total = runner.run("vector_add", total, part)
            assert_matches_golden(
                f"all-reduce sum of {len(parts)} parts on device {device}", total, expected, rtol=0
            )
        assert all(r.finalize() == 0 for r in runners)


@pytest.mark.device_count(1, est=1.0)
class TestSingleDeviceSoftmax:
    def test_softmax_on_the_allocated_device(self, simpler_platform, devices, rng):
        (runner,) = _runners(simpler_platform, devices)
        x = rng.standard_normal((8, 32), dtype=np.float32)
        # test_softmax.py's tolerance: float32 exp, a few ulps of relative error per element.
        assert_matches_golden(
            f"softmax 8x32 on device {devices[0]}",
            runner.run("softmax", x),
            softmax_golden(x),
            rtol=1e-5,
            atol=1e-7,
        )
        assert runner.finalize() == 0
