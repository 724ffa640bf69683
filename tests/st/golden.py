"""Numpy goldens for the scene suite, and the one check that turns a wrong answer into a verdict.

Imported by the scene tests as a sibling module (``from golden import ...``): tests/st is a
package-less directory, so pytest's default "prepend" import mode puts it on ``sys.path``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from simpler import GoldenMismatch

__all__ = [
    "FLOAT32_EPS",
    "assert_matches_golden",
    "matmul_atol",
    "matmul_golden",
    "softmax_golden",
]

FLOAT32_EPS = float(np.finfo(np.float32).eps)


def softmax_golden(x: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Softmax along the last axis, computed in float64 with the usual max shift."""
    wide = np.asarray(x, dtype=np.float64)
    shifted = np.exp(wide - wide.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def matmul_golden(a: npt.ArrayLike, b: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """The product in float64: the reference a float32 kernel is measured against."""
    return np.asarray(a, dtype=np.float64) @ np.asarray(b, dtype=np.float64)


def matmul_atol(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """The worst rounding error a float32 dot product of length k may carry.

    The classic bound |fl(a.b) - a.b| <= k * u * (|a| . |b|), with u = eps / 2, taken at its
    largest element and doubled for headroom: rounding the inputs can never exceed it, a wrong
    kernel (a dropped term, a swapped index) exceeds it at once.
    """
    a64, b64 = np.abs(np.asarray(a, np.float64)), np.abs(np.asarray(b, np.float64))
    k = a64.shape[-1]
    scale = float((a64 @ b64).max(initial=0.0))
    return max(k, 1) * FLOAT32_EPS * scale


def assert_matches_golden(
    name: str,
    actual: object,
    expected: npt.ArrayLike,
    *,
    rtol: float = 1e-6,
    atol: float = 0.0,
) -> None:
    """Raise :class:`simpler.GoldenMismatch` unless ``actual`` matches ``expected``.

    ``name`` says what ran (the kernel or the chain of kernels). The message names it, the
    shape, how many elements are off and the largest absolute error, so a failure reads on
    one line in the summary. Infinities must match exactly; a NaN never matches.
    """
    golden = np.asarray(expected, dtype=np.float64)
    if not isinstance(actual, np.ndarray):
        raise GoldenMismatch(
            f"{name}: expected an array of shape {golden.shape}, got {type(actual).__name__}"
        )
    if actual.shape != golden.shape:
        raise GoldenMismatch(
            f"{name}: output shape {actual.shape} differs from the golden's {golden.shape}"
        )
    got = actual.astype(np.float64)
    close = np.isclose(got, golden, rtol=rtol, atol=atol)
    if close.all():
        return
    with np.errstate(invalid="ignore"):
        error = np.abs(got - golden)
    error[np.isnan(error)] = np.inf  # a NaN, or an infinity where none belongs
    first = np.unravel_index(int(np.argmax(~close)), close.shape)
    raise GoldenMismatch(
        f"{name}: shape {actual.shape}: {int((~close).sum())} of {close.size} elements differ "
        f"from the numpy golden, max abs error {float(error[~close].max()):.3g} "
        f"(rtol={rtol:g}, atol={atol:g}); first at {tuple(int(i) for i in first)}: "
        f"got {float(got[first]):.9g}, expected {float(golden[first]):.9g}"
    )
