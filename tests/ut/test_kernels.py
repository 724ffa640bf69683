"""Every kernel is numerically right on both sims, and every bad argument is named before C++
(and, for a caller that bypasses Python, refused by the card without poisoning it)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np
import pytest

from simpler.runner import InOut, KernelArgumentError, Out, Runner, open_runner
from simpler.runner.kernels import prepare_launch

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
        (("vector_add", np.ones(2, np.float16), np.ones(2, np.float16)), TypeError, "float16"),
        (("vector_add", np.ones(2), np.ones(2, np.float32)), TypeError, "differ"),
        (("vector_add", np.ones(2, np.complex64), np.ones(2)), TypeError, "cannot carry"),
        (("vector_add", np.ones(2), np.ones(2), 1.0), ValueError, "0 scalar"),
        (("scale", np.ones(2, np.int32), 1.5), TypeError, "would truncate"),
        (("scale", np.ones(2)), ValueError, "1 scalar"),
        (("scale", np.ones(2), "2"), TypeError, "is a str"),
        (("scale", np.ones(2), 2**64), ValueError, "overflows int64"),
        (("noop", Out(np.ones(2))), ValueError, "writes no output"),
        (("softmax", np.ones(2, np.float32), InOut(np.ones(2, np.float32))), ValueError, "Out"),
        (
            ("softmax", np.ones(2, np.float32), Out(np.ones(3, np.float32))),
            ValueError,
            r"expected float32\[2\]",
        ),
        (("softmax", np.ones(2, np.float32), Out(np.ones(4, np.float32)[::2])), ValueError, "C-c"),
        (("vector_add", [1.0, 2.0], [1.0, 2.0]), TypeError, "is a list"),
        (
            ("matmul", np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)),
            ValueError,
            "not aligned",
        ),
        (("matmul", np.ones(3, np.float32), np.ones(3, np.float32)), ValueError, "2-D"),
        (("softmax", np.ones((2, 0), np.float32)), ValueError, "non-empty last axis"),
        (("softmax", np.float32(1.0)), ValueError, "got 0 array"),
    ],
)
def test_bad_kernel_arguments_raise_before_reaching_the_card(
    runner: Runner, args: tuple[object, ...], error: type[Exception], names: str
) -> None:
    with pytest.raises(error, match=names):
        runner.run(*args)  # type: ignore[arg-type]
    assert runner.probe() and not runner.unusable


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_elementwise_kernels_keep_their_dtype(runner: Runner, dtype: type) -> None:
    a = np.arange(-6, 6, dtype=dtype).reshape(3, 4)
    total = runner.run("vector_add", a, a * 2)
    scaled = runner.run("scale", a, dtype(3))
    assert isinstance(total, np.ndarray) and isinstance(scaled, np.ndarray)
    assert total.dtype == scaled.dtype == dtype
    np.testing.assert_array_equal(total, a * 3)
    np.testing.assert_array_equal(scaled, a * 3)


def test_a_float_alpha_scales_a_float_array(runner: Runner) -> None:
    a = _rand(16)
    np.testing.assert_allclose(runner.run("scale", a, 0.5), a * 0.5, rtol=1e-6)


def test_an_out_array_receives_the_result(runner: Runner) -> None:
    a, b = _rand(3, 4), _rand(4, 2)
    out = np.full((3, 2), np.nan, np.float32)
    assert runner.run("matmul", a, b, Out(out)) is out
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


def _unchecked(runner: Runner, kernel: str, *args: object) -> object:
    """Launch on the card without the simulator's Python checks, as another binding would."""
    launch = prepare_launch(kernel, args, known=None)
    native = runner._native
    rc = native.run(kernel, *runner._c_arrays(launch))
    return int(rc), str(native.last_where()), str(native.last_message())


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (("conv2d",), "unknown kernel 'conv2d'"),
        (("vector_add", np.ones(2), Out(np.ones(2))), "takes 3 tensor(s)"),
        (("vector_add", np.ones(2), np.ones(2), InOut(np.ones(2))), "direction 3"),
        (("vector_add", np.ones(2), np.ones(2, np.float32), Out(np.ones(2))), "dtype differs"),
        (("vector_add", np.ones(2), np.ones(3), Out(np.ones(2))), "shape differs"),
        (("scale", np.ones(2, np.int8), Out(np.ones(2, np.int8)), 2), "unsupported dtype 5"),
        (("scale", np.ones(2, np.int32), Out(np.ones(2, np.int32)), 0.5), "floating alpha"),
        (
            ("matmul", *(np.ones((2, 2), np.float32),) * 2, Out(np.ones((2, 3), np.float32))),
            "not aligned",
        ),
        (("noop", 1), "takes 0 tensor(s) and 0 scalar(s), got 0 and 1"),
    ],
)
def test_the_card_refuses_a_wrong_signature_and_stays_usable(
    runner: Runner, args: tuple[object, ...], names: str
) -> None:
    rc, where, message = _unchecked(runner, *args)  # type: ignore[misc]
    assert (rc, where) == (107000, "run") and names in message
    assert runner.probe() and not runner.unusable
    assert runner.run("noop") is None


def test_a_refused_launch_is_a_kernel_argument_error_not_a_device_error(runner: Runner) -> None:
    # As for a user's library: Python knows none of its kernels and the card does the checking.
    runner._library = dataclasses.replace(runner._library, kind="user")
    with pytest.raises(KernelArgumentError, match="rc 107000 at run: unknown kernel 'conv2d'"):
        runner.run("conv2d", np.ones(2), Out(np.ones(2)))
    out = np.zeros(3)
    assert runner.run("vector_add", np.ones(3), np.full(3, 2.0), Out(out)) is out
    assert out.tolist() == [3.0, 3.0, 3.0]
    assert runner.probe() and not runner.unusable
