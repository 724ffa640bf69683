"""Check a kernel's arguments and shape its launch, before anything reaches C++.

Everything a user can pass wrong is caught here as a ValueError or TypeError,
so a bad call can never crash the interpreter inside the native runner.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["KERNELS", "Launch", "prepare_launch"]

FloatArray = npt.NDArray[np.float32]

# kernel name -> number of input arrays
KERNELS: dict[str, int] = {"noop": 0, "spin": 0, "vector_add": 2, "matmul": 2, "softmax": 1}


@dataclass(frozen=True)
class Launch:
    """The inputs, the output buffer and the dimensions runner.h documents for a kernel."""

    kernel: str
    inputs: tuple[FloatArray, ...]
    out: FloatArray | None
    dims: tuple[int, int, int]


def prepare_launch(kernel: object, arrays: tuple[object, ...]) -> Launch:
    if not isinstance(kernel, str):
        raise TypeError(f"kernel name must be a str, got {type(kernel).__name__}")
    if kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r} (known: {', '.join(KERNELS)})")
    arity = KERNELS[kernel]
    if len(arrays) != arity:
        raise ValueError(f"kernel {kernel!r} takes {arity} array(s), got {len(arrays)}")
    inputs = tuple(_float32_input(kernel, i, a) for i, a in enumerate(arrays, start=1))
    if kernel in ("noop", "spin"):
        return Launch(kernel, (), None, (0, 0, 0))
    if kernel == "vector_add":
        return _vector_add(inputs[0], inputs[1])
    if kernel == "matmul":
        return _matmul(inputs[0], inputs[1])
    return _softmax(inputs[0])


def _float32_input(kernel: str, position: int, array: object) -> FloatArray:
    if not isinstance(array, np.ndarray):
        raise TypeError(
            f"kernel {kernel!r}: array {position} is a {type(array).__name__}, "
            "expected a numpy.ndarray of float32"
        )
    if array.dtype != np.float32:
        raise TypeError(
            f"kernel {kernel!r}: array {position} has dtype {array.dtype}, expected float32"
        )
    return np.ascontiguousarray(array)


def _vector_add(a: FloatArray, b: FloatArray) -> Launch:
    if a.shape != b.shape:
        raise ValueError(f"kernel 'vector_add': shapes {a.shape} and {b.shape} differ")
    return Launch("vector_add", (a, b), np.empty_like(a), (a.size, 0, 0))


def _matmul(a: FloatArray, b: FloatArray) -> Launch:
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"kernel 'matmul' needs 2-D arrays, got shapes {a.shape} and {b.shape}")
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2:
        raise ValueError(f"kernel 'matmul': shapes {a.shape} and {b.shape} are not aligned")
    return Launch("matmul", (a, b), np.empty((m, n), dtype=np.float32), (m, k, n))


def _softmax(a: FloatArray) -> Launch:
    if a.ndim == 0 or a.shape[-1] == 0:
        raise ValueError(f"kernel 'softmax' needs a non-empty last axis, got shape {a.shape}")
    row = a.shape[-1]
    return Launch("softmax", (a,), np.empty_like(a), (a.size // row, row, 0))
