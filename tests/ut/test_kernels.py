"""Every kernel is numerically right on both sims, and every bad argument is named before C++."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from simpler.runner import Runner, open_runner

RNG = np.random.default_rng(7)


def _rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.fixture
def runner(platform: str, fresh_device: int) -> Iterator[Runner]:
    r = open_runner(platform, fresh_device)
    r.init()
    yield r
    r.close()


@pytest.mark.parametrize("shape", [(1,), (7,), (3, 5), (1024,), (0,)])
def test_vector_add_matches_numpy(runner: Runner, shape: tuple[int, ...]) -> None:
    a, b = _rand(*shape), _rand(*shape)
    np.testing.assert_array_equal(runner.run("vector_add", a, b), a + b)


@pytest.mark.parametrize(("m", "k", "n"), [(1, 1, 1), (3, 4, 5), (64, 32, 48), (2, 0, 3)])
def test_matmul_matches_numpy(runner: Runner, m: int, k: int, n: int) -> None:
    a, b = _rand(m, k), _rand(k, n)
    np.testing.assert_allclose(runner.run("matmul", a, b), a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(1,), (9,), (4, 16), (2, 3, 8)])
def test_softmax_matches_numpy(runner: Runner, shape: tuple[int, ...]) -> None:
    x = _rand(*shape) * 10
    out = runner.run("softmax", x)
    assert out is not None and out.shape == x.shape
    np.testing.assert_allclose(out, _softmax(x), rtol=1e-5, atol=1e-7)


def test_non_contiguous_inputs_are_computed_correctly(runner: Runner) -> None:
    a = _rand(8, 6)[:, ::2]
    b = _rand(8, 6)[:, 1::2]
    np.testing.assert_array_equal(runner.run("vector_add", a, b), a + b)


def test_noop_returns_nothing_and_leaves_the_card_clean(runner: Runner) -> None:
    assert runner.run("noop") is None
    assert runner.probe() and not runner.unusable


@pytest.mark.parametrize(
    ("args", "error", "names"),
    [
        (("conv2d",), ValueError, "unknown kernel 'conv2d'"),
        ((42,), TypeError, "kernel name must be a str"),
        (("noop", np.ones(2, np.float32)), ValueError, "takes 0 array"),
        (("vector_add", np.ones(2, np.float32)), ValueError, "takes 2 array"),
        (("vector_add", np.ones(2, np.float32), np.ones(3, np.float32)), ValueError, "differ"),
        (("vector_add", np.ones(2), np.ones(2)), TypeError, "dtype float64"),
        (("vector_add", [1.0, 2.0], [1.0, 2.0]), TypeError, "is a list"),
        (
            ("matmul", np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)),
            ValueError,
            "not aligned",
        ),
        (("matmul", np.ones(3, np.float32), np.ones(3, np.float32)), ValueError, "2-D"),
        (("softmax", np.ones((2, 0), np.float32)), ValueError, "non-empty last axis"),
        (("softmax", np.float32(1.0)), TypeError, "numpy.ndarray"),
    ],
)
def test_bad_kernel_arguments_raise_before_reaching_the_card(
    runner: Runner, args: tuple[object, ...], error: type[Exception], names: str
) -> None:
    with pytest.raises(error, match=names):
        runner.run(*args)  # type: ignore[arg-type]
    assert runner.probe() and not runner.unusable
