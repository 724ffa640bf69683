"""matmul scenes: products against a float64 golden, within float32's rounding bound."""

from __future__ import annotations

import numpy as np
import pytest
from golden import assert_matches_golden, matmul_atol, matmul_golden

# (m, k, n): square, tall, wide, and a full 128-cube tile
SHAPES = [(1, 1, 1), (8, 16, 4), (64, 128, 32), (128, 128, 128)]


def _check_product(worker, a, b):
    out = worker.run("matmul", a, b)
    name = f"matmul {a.shape[0]}x{a.shape[1]} @ {b.shape[0]}x{b.shape[1]}"
    assert_matches_golden(name, out, matmul_golden(a, b), atol=matmul_atol(a, b))
    return out


@pytest.mark.runtime("tensormap_and_ringbuffer")
class TestMatmulOnRingbuffer:
    @pytest.mark.parametrize(("m", "k", "n"), SHAPES)
    def test_product_matches_numpy(self, worker, rng, m, k, n):
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        _check_product(worker, a, b)

    @pytest.mark.parametrize("size", [3, 64, 128])
    def test_identity_returns_the_other_operand_exactly(self, worker, rng, size):
        a = rng.standard_normal((size, size), dtype=np.float32)
        eye = np.eye(size, dtype=np.float32)
        assert_matches_golden(f"matmul {size}x{size} @ I", worker.run("matmul", a, eye), a)
        assert_matches_golden(f"matmul I @ {size}x{size}", worker.run("matmul", eye, a), a)


@pytest.mark.runtime("host_build_graph")
class TestMatmulOnHostGraph:
    @pytest.mark.parametrize(("m", "k", "n"), [(2, 3, 5), (33, 17, 65), (100, 50, 120)])
    def test_product_matches_numpy(self, worker, rng, m, k, n):
        a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        _check_product(worker, a, b)

    def test_outer_product_of_column_and_row_is_exact(self, worker, rng):
        col = rng.standard_normal((40, 1), dtype=np.float32)
        row = rng.standard_normal((1, 30), dtype=np.float32)
        # k = 1: each element is a single float32 multiply, nothing to accumulate.
        assert_matches_golden("matmul 40x1 @ 1x30", worker.run("matmul", col, row), col * row)

    def test_zero_matrix_annihilates(self, worker, rng):
        a = rng.standard_normal((16, 24), dtype=np.float32)
        zeros = np.zeros((24, 8), dtype=np.float32)
        assert_matches_golden("matmul A @ 0", worker.run("matmul", a, zeros), np.zeros((16, 8)))


@pytest.mark.runtime("tensormap_and_ringbuffer")
class TestMatmulVectorShapes:
    @pytest.mark.parametrize(("k", "n"), [(16, 1), (128, 64)])
    def test_row_vector_times_matrix(self, worker, rng, k, n):
        x = rng.standard_normal((1, k), dtype=np.float32)
        w = rng.standard_normal((k, n), dtype=np.float32)
        _check_product(worker, x, w)

    @pytest.mark.parametrize(("m", "k"), [(1, 16), (96, 128)])
    def test_matrix_times_column_vector(self, worker, rng, m, k):
        w = rng.standard_normal((m, k), dtype=np.float32)
        x = rng.standard_normal((k, 1), dtype=np.float32)
        _check_product(worker, w, x)


@pytest.mark.runtime("host_build_graph")
class TestMatmulAlgebra:
    def test_product_distributes_over_addition(self, worker, rng):
        a = rng.standard_normal((32, 64), dtype=np.float32)
        b = rng.standard_normal((64, 48), dtype=np.float32)
        c = rng.standard_normal((64, 48), dtype=np.float32)
        left = worker.run("matmul", a, worker.run("vector_add", b, c))
        right = worker.run("vector_add", worker.run("matmul", a, b), worker.run("matmul", a, c))
        # b + c is one float32 add, as exact on the device as in numpy: one product's bound.
        assert_matches_golden(
            "matmul A(B+C)", left, matmul_golden(a, b + c), atol=matmul_atol(a, b + c)
        )
        # Two products' bounds; each is doubled, which covers the one rounding of their sum.
        ab_ac = matmul_golden(a, b) + matmul_golden(a, c)
        right_atol = matmul_atol(a, b) + matmul_atol(a, c)
        assert_matches_golden("matmul AB+AC", right, ab_ac, atol=right_atol)
        # Both sides are within their bounds of the same value: within the sum of the bounds.
        tolerance = 2 * right_atol
        assert_matches_golden("matmul A(B+C) vs AB+AC", left, right, atol=tolerance)

    def test_transpose_of_product_is_product_of_transposes(self, worker, rng):
        a = rng.standard_normal((20, 36), dtype=np.float32)
        b = rng.standard_normal((36, 28), dtype=np.float32)
        ab = _check_product(worker, a, b)
        bt_at = _check_product(worker, b.T, a.T)  # transposed views: the runner copies them
        assert_matches_golden("matmul (AB)^T vs B^T A^T", bt_at, ab.T, atol=2 * matmul_atol(a, b))

    def test_permutation_matrix_reorders_rows(self, worker, rng):
        a = rng.standard_normal((12, 10), dtype=np.float32)
        order = rng.permutation(12)
        perm = np.eye(12, dtype=np.float32)[order]
        assert_matches_golden("matmul P @ A", worker.run("matmul", perm, a), a[order])


@pytest.mark.runtime("tensormap_and_ringbuffer")
class TestMatmulBlockStructure:
    def test_block_diagonal_product_keeps_blocks_independent(self, worker, rng):
        top = rng.standard_normal((24, 24), dtype=np.float32)
        bottom = rng.standard_normal((40, 40), dtype=np.float32)
        blocks = np.zeros((64, 64), dtype=np.float32)
        blocks[:24, :24], blocks[24:, 24:] = top, bottom
        out = _check_product(worker, blocks, blocks)
        assert not out[:24, 24:].any() and not out[24:, :24].any(), "blocks leaked into each other"

    def test_integer_valued_inputs_give_exact_integer_products(self, worker, rng):
        # Small integers and their sums are exact in float32: any error is the kernel's.
        a = rng.integers(-8, 9, (48, 128)).astype(np.float32)
        b = rng.integers(-8, 9, (128, 56)).astype(np.float32)
        assert_matches_golden("matmul integer 48x128 @ 128x56", worker.run("matmul", a, b), a @ b)
