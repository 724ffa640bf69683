"""vector_add scenes: elementwise sums that must match numpy bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from golden import assert_matches_golden

from simpler import GoldenMismatch

SHAPES = [(1,), (1000,), (16, 64), (4, 8, 32)]


@pytest.mark.runtime("tensormap_and_ringbuffer")
class TestVectorAddOnRingbuffer:
    @pytest.mark.parametrize("shape", SHAPES)
    def test_sum_matches_numpy(self, worker, rng, shape):
        a = rng.standard_normal(shape, dtype=np.float32)
        b = rng.standard_normal(shape, dtype=np.float32)
        # One float32 add per element: the device must round exactly as numpy does.
        assert_matches_golden(f"vector_add {shape}", worker.run("vector_add", a, b), a + b)

    def test_operand_order_does_not_change_the_sum(self, worker, rng):
        a = rng.standard_normal((32, 48), dtype=np.float32)
        b = rng.standard_normal((32, 48), dtype=np.float32)
        ab = worker.run("vector_add", a, b)
        ba = worker.run("vector_add", b, a)
        assert_matches_golden("vector_add a+b (32, 48)", ab, a + b)
        assert_matches_golden("vector_add b+a (32, 48)", ba, a + b)
        # IEEE addition commutes: the two orders must agree bit for bit.
        assert_matches_golden("vector_add b+a vs a+b", ba, ab, rtol=0)

    def test_adding_zeros_returns_the_input(self, worker, rng):
        a = rng.standard_normal((256,), dtype=np.float32)
        out = worker.run("vector_add", a, np.zeros_like(a))
        assert_matches_golden("vector_add a+0", out, a)


@pytest.mark.runtime("host_build_graph")
class TestVectorAddOnHostGraph:
    @pytest.mark.parametrize("shape", SHAPES)
    def test_sum_matches_numpy(self, worker, rng, shape):
        a = rng.uniform(-100, 100, shape).astype(np.float32)
        b = rng.uniform(-100, 100, shape).astype(np.float32)
        assert_matches_golden(f"vector_add {shape}", worker.run("vector_add", a, b), a + b)

    def test_a_value_plus_its_negation_is_zero(self, worker, rng):
        a = rng.standard_normal((8, 128), dtype=np.float32)
        assert_matches_golden(
            "vector_add a+(-a)", worker.run("vector_add", a, -a), np.zeros(a.shape)
        )


@pytest.mark.runtime("tensormap_and_ringbuffer")
class TestVectorAddExtremeValues:
    def test_overflow_saturates_to_infinity_like_numpy(self, worker):
        big = np.array([3e38, -3e38, 3e38, 1.0], dtype=np.float32)
        with np.errstate(over="ignore"):
            expected = big + big
        out = worker.run("vector_add", big, big)
        assert np.isposinf(out[0]) and np.isneginf(out[1])
        assert_matches_golden("vector_add overflow", out, expected)

    def test_subnormals_are_not_flushed_to_zero(self, worker):
        tiny = np.full(64, np.finfo(np.float32).smallest_subnormal, dtype=np.float32)
        out = worker.run("vector_add", tiny, tiny)
        assert (out > 0).all(), "subnormal inputs were flushed to zero"
        assert_matches_golden("vector_add subnormals", out, tiny + tiny)

    def test_large_and_small_magnitudes_round_like_float32(self, worker):
        # 2**24 + 1 is not a float32: the sum rounds back to 2**24, exactly as on the host.
        a = np.full(16, 2.0**24, dtype=np.float32)
        b = np.ones(16, dtype=np.float32)
        assert_matches_golden("vector_add 2**24 + 1", worker.run("vector_add", a, b), a + b)


@pytest.mark.runtime("host_build_graph")
class TestVectorAddRunningSum:
    @pytest.mark.parametrize("terms", [2, 10, 50])
    def test_chained_adds_match_a_sequential_float32_sum(self, worker, rng, terms):
        parts = rng.standard_normal((terms, 512), dtype=np.float32)
        total = parts[0]
        expected = parts[0].copy()
        for part in parts[1:]:
            total = worker.run("vector_add", total, part)
            expected = expected + part  # same order, same float32 rounding
        assert_matches_golden(f"vector_add running sum of {terms}", total, expected)


@pytest.mark.runtime("tensormap_and_ringbuffer")
class TestGoldenCheckCatchesWrongOutput:
    """A wrong answer from the device is a golden mismatch, and the card goes on serving.

    The device computes from a damaged input, as from a buffer corrupted on its way to the
    card, while the golden comes from the intended one: the output is wrong as a faulty
    kernel's would be, and must read as GoldenMismatch (a failure that poisons no worker),
    never as a pass or a device error. The card did nothing wrong: the same worker then
    answers the intended inputs right.
    """

    def test_one_wrong_element_is_a_golden_mismatch(self, worker, rng):
        a = rng.standard_normal((4, 16), dtype=np.float32)
        damaged = a.copy()
        damaged[2, 5] += 0.5
        out = worker.run("vector_add", damaged, a)
        with pytest.raises(GoldenMismatch, match=r"vector_add.*\(4, 16\).*1 of 64.*0\.5"):
            assert_matches_golden("vector_add", out, a + a)
        assert_matches_golden("vector_add after a mismatch", worker.run("vector_add", a, a), a + a)

    def test_a_wrong_shape_is_a_golden_mismatch(self, worker, rng):
        a = rng.standard_normal((8, 8), dtype=np.float32)
        # The inputs reach the device flattened: the right numbers, in the wrong shape.
        out = worker.run("vector_add", a.reshape(64), a.reshape(64))
        assert_matches_golden("vector_add flattened", out, (a + a).reshape(64))
        with pytest.raises(GoldenMismatch, match=r"shape \(64,\) differs.*\(8, 8\)"):
            assert_matches_golden("vector_add", out, a + a)
        assert_matches_golden("vector_add after a mismatch", worker.run("vector_add", a, a), a + a)
