"""An op that never finishes is reaped with the platform's op-timeout, and the card heals.

The classes run in file order on one pooled worker per runtime: the work before the hang,
the hang itself, then the work after it. The later classes pass only if the plugin healed
the sticky-errored card (poisoned -> force_reset -> rebuilt) instead of reusing it.
"""

from __future__ import annotations

import numpy as np
import pytest
from golden import assert_matches_golden, matmul_atol, matmul_golden, softmax_golden

from simpler import DeviceRuntimeError
from simpler.runner.platforms import OP_TIMEOUT


def _assert_reaped_with_op_timeout(worker, platform):
    if platform not in OP_TIMEOUT:
        # A GPU kernel past the op-timeout is not reaped: nothing stops it in process, and the
        # process holding the context must end (scripts/gpu_check.py measures that).
        pytest.skip(f"{platform} cannot reap a spinning kernel in process")
    rc, where = OP_TIMEOUT[platform]
    with pytest.raises(DeviceRuntimeError) as caught:
        worker.run("spin")
    assert (caught.value.rc, caught.value.where) == (rc, where), (
        f"spin on {platform} failed with rc {caught.value.rc} at {caught.value.where}, "
        f"expected the op-timeout: rc {rc} at {where}"
    )


@pytest.mark.runtime("tensormap_and_ringbuffer")
class TestWorkBeforeTheHang:
    def test_vector_add_is_correct_on_the_fresh_worker(self, worker, rng):
        a = rng.standard_normal((128,), dtype=np.float32)
        b = rng.standard_normal((128,), dtype=np.float32)
        assert_matches_golden("vector_add (128,)", worker.run("vector_add", a, b), a + b)

    def test_noop_completes_and_returns_nothing(self, worker):
        assert worker.run("noop") is None


@pytest.mark.runtime("tensormap_and_ringbuffer")
class TestOpTimeoutOnRingbuffer:
    def test_spin_is_reaped_with_the_platform_op_timeout(self, worker, simpler_platform):
        _assert_reaped_with_op_timeout(worker, simpler_platform)

    def test_next_test_gets_a_healed_worker(self, worker, rng):
        x = rng.standard_normal((16, 32), dtype=np.float32)
        out = worker.run("softmax", x)
        assert_matches_golden("softmax (16, 32)", out, softmax_golden(x), rtol=1e-5, atol=1e-7)


@pytest.mark.runtime("host_build_graph")
class TestOpTimeoutOnHostGraph:
    def test_spin_is_reaped_with_the_platform_op_timeout(self, worker, simpler_platform):
        _assert_reaped_with_op_timeout(worker, simpler_platform)

    def test_next_test_gets_a_healed_worker(self, worker, rng):
        a = rng.standard_normal((24, 40), dtype=np.float32)
        b = rng.standard_normal((40, 16), dtype=np.float32)
        out = worker.run("matmul", a, b)
        assert_matches_golden(
            "matmul 24x40 @ 40x16", out, matmul_golden(a, b), atol=matmul_atol(a, b)
        )


@pytest.mark.runtime("tensormap_and_ringbuffer")
class TestWorkAfterTheHang:
    @pytest.mark.parametrize(("m", "k", "n"), [(8, 8, 8), (64, 128, 64)])
    def test_matmul_is_correct_on_the_healed_worker(self, worker, rng, m, k, n):
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        out = worker.run("matmul", a, b)
        name = f"matmul {m}x{k} @ {k}x{n}"
        assert_matches_golden(name, out, matmul_golden(a, b), atol=matmul_atol(a, b))

    def test_the_healed_worker_keeps_running_back_to_back_launches(self, worker, rng):
        x = rng.standard_normal((4, 64), dtype=np.float32)
        expected = x.copy()
        for _ in range(20):
            x = worker.run("vector_add", x, x)
            expected = expected * 2  # doubling is exact in float32
        assert_matches_golden("vector_add doubled 20 times", x, expected)


@pytest.mark.runtime("host_build_graph")
class TestHostGraphWorkAfterTheHang:
    def test_softmax_is_correct_on_the_healed_worker(self, worker, rng):
        x = rng.standard_normal((32, 64), dtype=np.float32)
        out = worker.run("softmax", x)
        assert_matches_golden("softmax (32, 64)", out, softmax_golden(x), rtol=1e-5, atol=1e-7)

    def test_vector_add_is_correct_on_the_healed_worker(self, worker, rng):
        a = rng.standard_normal((3, 5, 7), dtype=np.float32)
        b = rng.standard_normal((3, 5, 7), dtype=np.float32)
        assert_matches_golden("vector_add (3, 5, 7)", worker.run("vector_add", a, b), a + b)
