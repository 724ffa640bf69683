"""Chains of kernels, as a model runs them: each step's device output feeds the next.

Host-side glue (a transpose, a scale, a mask) runs in numpy between launches, as a graph
builder would place it; the golden is the whole chain in float64.
"""

from __future__ import annotations

import numpy as np
import pytest
from golden import assert_matches_golden, softmax_golden

# Errors compound over a chain: a few float32 roundings per step, relative to the values.
RTOL, ATOL = 1e-4, 1e-5


def _attention(worker, q, k, v, mask=None):
    """softmax(Q K^T / sqrt(d) [+ mask]) V on the device."""
    scale = np.float32(1 / np.sqrt(q.shape[-1]))
    scores = worker.run("matmul", q, k.T) * scale
    if mask is not None:
        scores = worker.run("vector_add", scores, mask)
    weights = worker.run("softmax", scores)
    return worker.run("matmul", weights, v), weights


def _attention_golden(q, k, v, mask=None):
    q64, k64, v64 = (np.asarray(t, np.float64) for t in (q, k, v))
    scores = q64 @ k64.T / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + mask
    weights = softmax_golden(scores)
    return weights @ v64, weights


def _causal_mask(length):
    return np.triu(np.full((length, length), -np.inf, dtype=np.float32), k=1)


@pytest.mark.runtime("tensormap_and_ringbuffer")
class TestClassifierHead:
    """logits = features @ W, then class probabilities."""

    @pytest.mark.parametrize(("batch", "features", "classes"), [(1, 16, 4), (32, 128, 10)])
    def test_probabilities_match_numpy(self, worker, rng, batch, features, classes):
        x = rng.standard_normal((batch, features), dtype=np.float32)
        w = (rng.standard_normal((features, classes)) / np.sqrt(features)).astype(np.float32)
        probs = worker.run("softmax", worker.run("matmul", x, w))
        expected = softmax_golden(np.asarray(x, np.float64) @ w)
        assert_matches_golden(
            f"matmul->softmax {batch}x{features}->{classes}", probs, expected, rtol=RTOL, atol=ATOL
        )

    def test_predicted_class_matches_numpy(self, worker, rng):
        x = rng.standard_normal((64, 32), dtype=np.float32)
        w = rng.standard_normal((32, 8), dtype=np.float32)
        probs = worker.run("softmax", worker.run("matmul", x, w))
        np.testing.assert_array_equal(probs.argmax(axis=-1), (x.astype(np.float64) @ w).argmax(-1))


@pytest.mark.runtime("host_build_graph")
class TestSelfAttentionOnHostGraph:
    @pytest.mark.parametrize(("seq", "dim"), [(4, 8), (32, 64), (128, 64)])
    def test_output_matches_numpy(self, worker, rng, seq, dim):
        q, k, v = (rng.standard_normal((seq, dim), dtype=np.float32) for _ in range(3))
        out, _ = _attention(worker, q, k, v)
        expected, _ = _attention_golden(q, k, v)
        assert_matches_golden(f"attention seq={seq} dim={dim}", out, expected, rtol=RTOL, atol=ATOL)

    def test_each_query_spreads_exactly_one_unit_of_attention(self, worker, rng):
        q, k, v = (rng.standard_normal((48, 32), dtype=np.float32) for _ in range(3))
        out, weights = _attention(worker, q, k, v)
        expected_out, expected_weights = _attention_golden(q, k, v)
        assert_matches_golden("attention weights", weights, expected_weights, rtol=RTOL, atol=ATOL)
        assert_matches_golden("attention", out, expected_out, rtol=RTOL, atol=ATOL)
        assert_matches_golden("attention weight row sums", weights.sum(-1), np.ones(48), rtol=1e-5)


@pytest.mark.runtime("tensormap_and_ringbuffer")
class TestCausalAttentionOnRingbuffer:
    @pytest.mark.parametrize(("seq", "dim"), [(8, 16), (64, 32)])
    def test_output_matches_numpy(self, worker, rng, seq, dim):
        q, k, v = (rng.standard_normal((seq, dim), dtype=np.float32) for _ in range(3))
        mask = _causal_mask(seq)
        out, _ = _attention(worker, q, k, v, mask)
        expected, _ = _attention_golden(q, k, v, mask)
        name = f"causal attention seq={seq} dim={dim}"
        assert_matches_golden(name, out, expected, rtol=RTOL, atol=ATOL)

    def test_no_query_attends_to_a_later_position(self, worker, rng):
        q, k, v = (rng.standard_normal((16, 8), dtype=np.float32) for _ in range(3))
        mask = _causal_mask(16)
        out, weights = _attention(worker, q, k, v, mask)
        expected_out, expected_weights = _attention_golden(q, k, v, mask)
        name = "causal attention"
        assert_matches_golden(f"{name} weights", weights, expected_weights, rtol=RTOL, atol=ATOL)
        assert_matches_golden(name, out, expected_out, rtol=RTOL, atol=ATOL)
        future = np.triu(np.ones((16, 16), dtype=bool), k=1)
        assert not weights[future].any(), "a query attended to a later position"

    def test_first_position_only_sees_itself(self, worker, rng):
        q, k, v = (rng.standard_normal((10, 12), dtype=np.float32) for _ in range(3))
        out, _ = _attention(worker, q, k, v, _causal_mask(10))
        assert_matches_golden("causal attention row 0", out[0], v[0])


@pytest.mark.runtime("host_build_graph")
class TestResidualBlock:
    """y = x + x @ W, stacked: the add must see the matmul's output, not a stale buffer."""

    @pytest.mark.parametrize(("tokens", "width"), [(1, 8), (16, 64), (64, 128)])
    def test_one_block_matches_numpy(self, worker, rng, tokens, width):
        x = rng.standard_normal((tokens, width), dtype=np.float32)
        w = (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32)
        y = worker.run("vector_add", x, worker.run("matmul", x, w))
        x64 = x.astype(np.float64)
        name = f"residual block {tokens}x{width}"
        assert_matches_golden(name, y, x64 + x64 @ w, rtol=RTOL, atol=ATOL)

    def test_four_stacked_blocks_match_numpy(self, worker, rng):
        x = rng.standard_normal((8, 32), dtype=np.float32)
        weights = [(rng.standard_normal((32, 32)) * 0.1).astype(np.float32) for _ in range(4)]
        y, expected = x, x.astype(np.float64)
        for w in weights:
            y = worker.run("vector_add", y, worker.run("matmul", y, w))
            expected = expected + expected @ w
        assert_matches_golden("4 residual blocks 8x32", y, expected, rtol=RTOL, atol=ATOL)


@pytest.mark.runtime("tensormap_and_ringbuffer")
class TestAttentionWithResidual:
    """A transformer sublayer: x + attention(x W_q, x W_k, x W_v)."""

    @pytest.mark.parametrize(("seq", "dim"), [(8, 16), (32, 64)])
    def test_sublayer_matches_numpy(self, worker, rng, seq, dim):
        x = rng.standard_normal((seq, dim), dtype=np.float32)
        wq, wk, wv = (
            (rng.standard_normal((dim, dim)) / np.sqrt(dim)).astype(np.float32) for _ in range(3)
        )
        q, k, v = (worker.run("matmul", x, w) for w in (wq, wk, wv))
        attended, _ = _attention(worker, q, k, v)
        y = worker.run("vector_add", x, attended)
        x64 = x.astype(np.float64)
        expected, _ = _attention_golden(x64 @ wq, x64 @ wk, x64 @ wv)
        assert_matches_golden(
            f"attention sublayer seq={seq} dim={dim}", y, x64 + expected, rtol=RTOL, atol=ATOL
        )

    def test_zero_value_projection_leaves_the_input_unchanged(self, worker, rng):
        x = rng.standard_normal((12, 16), dtype=np.float32)
        q = worker.run("matmul", x, rng.standard_normal((16, 16), dtype=np.float32))
        v = worker.run("matmul", x, np.zeros((16, 16), dtype=np.float32))
        attended, _ = _attention(worker, q, q, v)
        assert_matches_golden("x + attention with V = 0", worker.run("vector_add", x, attended), x)


@pytest.mark.runtime("host_build_graph")
class TestTwoLayerProjection:
    """(x W1) W2 on the device equals x (W1 W2): the chain keeps its intermediates intact."""

    @pytest.mark.parametrize(("m", "k", "h", "n"), [(4, 8, 16, 4), (64, 128, 96, 32)])
    def test_chained_products_match_numpy(self, worker, rng, m, k, h, n):
        x = rng.standard_normal((m, k), dtype=np.float32)
        w1 = (rng.standard_normal((k, h)) / np.sqrt(k)).astype(np.float32)
        w2 = (rng.standard_normal((h, n)) / np.sqrt(h)).astype(np.float32)
        out = worker.run("matmul", worker.run("matmul", x, w1), w2)
        expected = x.astype(np.float64) @ w1 @ w2
        assert_matches_golden(
            f"matmul->matmul {m}x{k}->{h}->{n}", out, expected, rtol=RTOL, atol=ATOL
        )

    def test_association_order_agrees_on_the_device(self, worker, rng):
        x = rng.standard_normal((16, 32), dtype=np.float32)
        w1 = (rng.standard_normal((32, 24)) / np.sqrt(32)).astype(np.float32)
        w2 = (rng.standard_normal((24, 8)) / np.sqrt(24)).astype(np.float32)
        left = worker.run("matmul", worker.run("matmul", x, w1), w2)
        right = worker.run("matmul", x, worker.run("matmul", w1, w2))
        expected = x.astype(np.float64) @ w1 @ w2
        assert_matches_golden("matmul (xW1)W2", left, expected, rtol=RTOL, atol=ATOL)
        assert_matches_golden("matmul x(W1W2)", right, expected, rtol=RTOL, atol=ATOL)
        assert_matches_golden("matmul (xW1)W2 vs x(W1W2)", left, right, rtol=RTOL, atol=ATOL)
