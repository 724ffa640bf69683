"""Check a kernel's arguments and shape its launch, before anything reaches C++.

Everything a user can pass wrong is caught here as a ValueError or TypeError,
so a bad call can never crash the interpreter inside the native runner. The
simulated card's kernels are known here by signature, so ``run("vector_add",
a, b)`` allocates and returns the output; a library's kernels are not, so their
outputs are the arrays the caller marks ``Out``/``InOut``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from simpler.runner.faults import GPU_FAULT_KERNELS
from simpler.runner.tensors import IN, OUT, Packed, Scalar, Tensor, pack, split_args

__all__ = ["CUDA_KERNELS", "KERNELS", "Launch", "known_kernels", "prepare_launch"]

AnyArray = npt.NDArray[Any]
ELEMENTWISE_DTYPES = ("float32", "float64", "int32", "int64")


@dataclass(frozen=True)
class Launch:
    """What runner.h's run() receives, and what ``Runner.run`` hands back afterwards."""

    kernel: str
    packed: Packed
    outputs: tuple[AnyArray, ...]

    def result(self) -> AnyArray | tuple[AnyArray, ...] | None:
        if not self.outputs:
            return None
        return self.outputs[0] if len(self.outputs) == 1 else self.outputs


# A known kernel's check: its inputs and scalars -> the shape and dtype of its output.
OutputRule = Callable[[list[AnyArray], list[Scalar]], "tuple[tuple[int, ...], np.dtype[Any]]"]


@dataclass(frozen=True)
class KernelSpec:
    inputs: int
    scalars: int
    output: OutputRule | None  # None: the kernel writes nothing


def prepare_launch(
    kernel: object, args: tuple[object, ...], known: dict[str, KernelSpec] | None
) -> Launch:
    """``known``: the runner's kernels by name (simpler's own runners); None: a library's."""
    if not isinstance(kernel, str):
        raise TypeError(f"kernel name must be a str, got {type(kernel).__name__}")
    if known is not None and kernel not in known:
        raise ValueError(f"unknown kernel {kernel!r} (known: {', '.join(known)})")
    tensors, scalars = split_args(kernel, args)
    if known is not None:
        return _known_launch(kernel, known[kernel], tensors, scalars)
    outputs = tuple(t.array for t in tensors if t.direction != IN)
    return Launch(kernel, pack(tensors, scalars), outputs)


def _known_launch(
    kernel: str, spec: KernelSpec, tensors: list[Tensor], scalars: list[Scalar]
) -> Launch:
    inputs = [t.array for t in tensors if t.direction == IN]
    given = [t for t in tensors if t.direction != IN]
    if len(inputs) != spec.inputs or len(scalars) != spec.scalars:
        raise ValueError(
            f"kernel {kernel!r} takes {spec.inputs} array(s) and {spec.scalars} scalar(s), "
            f"got {len(inputs)} array(s) and {len(scalars)} scalar(s)"
        )
    if spec.output is None:
        if given:
            raise ValueError(f"kernel {kernel!r} writes no output, got {len(given)} Out/InOut")
        return Launch(kernel, pack(tensors, scalars), ())
    shape, dtype = spec.output(inputs, scalars)
    if len(given) > 1 or (given and given[0].direction != OUT):
        raise ValueError(f"kernel {kernel!r} writes one output: pass at most one Out(...)")
    if given and (given[0].array.shape != shape or given[0].array.dtype != dtype):
        out = given[0].array
        raise ValueError(
            f"kernel {kernel!r}: the Out array is {out.dtype}{list(out.shape)}, "
            f"expected {dtype}{list(shape)}"
        )
    out = given[0].array if given else np.empty(shape, dtype=dtype)
    ordered = [Tensor(a, IN) for a in inputs] + [Tensor(out, OUT)]
    return Launch(kernel, pack(ordered, scalars), (out,))


def _dtype_in(kernel: str, array: AnyArray, allowed: tuple[str, ...]) -> None:
    if array.dtype.name not in allowed:
        raise TypeError(
            f"kernel {kernel!r}: an array has dtype {array.dtype}, expected {' or '.join(allowed)}"
        )


def _vector_add(inputs: list[AnyArray], _: list[Scalar]) -> tuple[tuple[int, ...], Any]:
    a, b = inputs
    _dtype_in("vector_add", a, ELEMENTWISE_DTYPES)
    if a.dtype != b.dtype:
        raise TypeError(f"kernel 'vector_add': dtypes {a.dtype} and {b.dtype} differ")
    if a.shape != b.shape:
        raise ValueError(f"kernel 'vector_add': shapes {a.shape} and {b.shape} differ")
    return a.shape, a.dtype


def _scale(inputs: list[AnyArray], scalars: list[Scalar]) -> tuple[tuple[int, ...], Any]:
    (a,) = inputs
    _dtype_in("scale", a, ELEMENTWISE_DTYPES)
    if a.dtype.kind == "i" and scalars[0].code in (1, 2, 3, 4):
        raise TypeError(f"kernel 'scale': a float alpha for a {a.dtype} array would truncate")
    return a.shape, a.dtype


def _matmul(inputs: list[AnyArray], _: list[Scalar]) -> tuple[tuple[int, ...], Any]:
    a, b = inputs
    for array in inputs:
        _dtype_in("matmul", array, ("float32",))
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"kernel 'matmul' needs 2-D arrays, got shapes {a.shape} and {b.shape}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"kernel 'matmul': shapes {a.shape} and {b.shape} are not aligned")
    return (a.shape[0], b.shape[1]), a.dtype


def _softmax(inputs: list[AnyArray], _: list[Scalar]) -> tuple[tuple[int, ...], Any]:
    (a,) = inputs
    _dtype_in("softmax", a, ("float32",))
    if a.ndim == 0 or a.shape[-1] == 0:
        raise ValueError(f"kernel 'softmax' needs a non-empty last axis, got shape {a.shape}")
    return a.shape, a.dtype


# The simulated card's kernels (simkernels.h), by name.
KERNELS: dict[str, KernelSpec] = {
    "noop": KernelSpec(0, 0, None),
    "spin": KernelSpec(0, 0, None),
    "vector_add": KernelSpec(2, 0, _vector_add),
    "scale": KernelSpec(1, 1, _scale),
    "matmul": KernelSpec(2, 0, _matmul),
    "softmax": KernelSpec(1, 0, _softmax),
}

# The CUDA runner's (runner/cuda/kernels.cu): the same kernels, and the real fault kernels.
CUDA_KERNELS: dict[str, KernelSpec] = {
    **KERNELS,
    **{name: KernelSpec(0, 0, None) for name in GPU_FAULT_KERNELS},
}


_KERNELS_BY_LIBRARY = {"sim": KERNELS, "cuda": CUDA_KERNELS}


def known_kernels(library_kind: str) -> dict[str, KernelSpec] | None:
    """The kernels simpler's own runner of that kind implements; None for a user's library."""
    return _KERNELS_BY_LIBRARY.get(library_kind)
