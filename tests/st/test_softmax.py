"""softmax scenes: probabilities along the last axis, against a float64 golden."""

from __future__ import annotations

import numpy as np
import pytest
from golden import assert_matches_golden, softmax_golden

# float32 exp and a float64 row sum: a few ulps of relative error per element
RTOL, ATOL = 1e-5, 1e-7


@pytest.mark.runtime("tensormap_and_ringbuffer")
class TestSoftmaxOnRingbuffer:
    @pytest.mark.parametrize("shape", [(7,), (4, 16), (32, 128), (2, 3, 64)])
    def test_matches_numpy(self, worker, rng, shape):
        x = rng.standard_normal(shape, dtype=np.float32) * 4
        out = worker.run("softmax", x)
        assert_matches_golden(f"softmax {shape}", out, softmax_golden(x), rtol=RTOL, atol=ATOL)

    def test_every_row_is_a_probability_distribution(self, worker, rng):
        x = rng.standard_normal((64, 100), dtype=np.float32) * 10
        out = worker.run("softmax", x)
        assert ((out >= 0) & (out <= 1)).all(), "a probability outside [0, 1]"
        assert_matches_golden("softmax row sums", out.sum(axis=-1), np.ones(64), rtol=1e-5)


@pytest.mark.runtime("host_build_graph")
class TestSoftmaxOnHostGraph:
    @pytest.mark.parametrize("shape", [(1, 5), (16, 33), (8, 4, 32)])
    def test_matches_numpy(self, worker, rng, shape):
        x = rng.uniform(-20, 20, shape).astype(np.float32)
        out = worker.run("softmax", x)
        assert_matches_golden(f"softmax {shape}", out, softmax_golden(x), rtol=RTOL, atol=ATOL)

    def test_shifting_a_row_by_a_constant_changes_nothing(self, worker, rng):
        x = rng.standard_normal((12, 40), dtype=np.float32)
        shifted = (x + np.float32(50)).astype(np.float32)
        out = worker.run("softmax", shifted)
        # x + 50 rounds each logit by up to half an ulp of 50, hence the looser tolerance.
        assert_matches_golden("softmax x+50", out, softmax_golden(x), rtol=1e-4, atol=1e-6)
        assert_matches_golden(
            "softmax x+50 vs x", out, worker.run("softmax", x), rtol=1e-4, atol=1e-6
        )

    def test_huge_logits_stay_finite(self, worker, rng):
        # exp(1000) overflows float32; a kernel that forgets the max shift returns NaN here.
        x = (rng.standard_normal((6, 24)) * 1000).astype(np.float32)
        out = worker.run("softmax", x)
        assert np.isfinite(out).all(), "softmax overflowed on large logits"
        assert_matches_golden("softmax large logits", out, softmax_golden(x), rtol=RTOL, atol=ATOL)


@pytest.mark.runtime("tensormap_and_ringbuffer")
class TestSoftmaxDegenerateRows:
    def test_a_single_column_is_certain(self, worker, rng):
        x = rng.standard_normal((10, 1), dtype=np.float32)
        assert_matches_golden("softmax (10, 1)", worker.run("softmax", x), np.ones((10, 1)))

    @pytest.mark.parametrize("width", [2, 3, 100])
    def test_a_constant_row_is_uniform(self, worker, width):
        x = np.full((4, width), -3.25, dtype=np.float32)
        out = worker.run("softmax", x)
        assert_matches_golden(f"softmax constant (4, {width})", out, np.full(x.shape, 1 / width))

    def test_one_dominant_logit_takes_all_the_mass(self, worker):
        x = np.zeros((3, 8), dtype=np.float32)
        x[[0, 1, 2], [0, 4, 7]] = 200.0
        assert_matches_golden("softmax one-hot", worker.run("softmax", x), np.eye(8)[[0, 4, 7]])


@pytest.mark.runtime("host_build_graph")
class TestSoftmaxPreservesRanking:
    @pytest.mark.parametrize("shape", [(16, 10), (4, 128)])
    def test_largest_logit_keeps_the_largest_probability(self, worker, rng, shape):
        x = rng.standard_normal(shape, dtype=np.float32)
        out = worker.run("softmax", x)
        np.testing.assert_array_equal(out.argmax(axis=-1), x.argmax(axis=-1))

    def test_probabilities_keep_the_order_of_their_logits(self, worker, rng):
        x = rng.permutation(np.linspace(-4, 4, 64, dtype=np.float32)).reshape(1, 64)
        out = worker.run("softmax", x)
        np.testing.assert_array_equal(np.argsort(out[0]), np.argsort(x[0]))
