"""A launch's arguments as runner.h receives them: numpy arrays and Python scalars
packed into ``simpler_tensor`` and ``simpler_scalar`` arrays.

The arrays are laid out here, in numpy buffers with the exact C layout runner.h
fixes with static_asserts, so a launch costs one buffer per kind instead of a
cppyy proxy per argument. Every argument a user can get wrong is refused here
with a TypeError or ValueError, before anything reaches C++.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from simpler.runner.directions import IN, INOUT, OUT, Directed, InOut, Out

__all__ = [
    "DTYPE_CODES",
    "IN",
    "INOUT",
    "OUT",
    "InOut",
    "Out",
    "Packed",
    "Scalar",
    "Tensor",
    "pack",
    "split_args",
]

# runner.h's simpler_dtype values, by numpy dtype name (stable: part of the ABI).
DTYPE_CODES: dict[str, int] = {
    "float16": 1,
    "bfloat16": 2,  # numpy has none built in; ml_dtypes' bfloat16 carries this name
    "float32": 3,
    "float64": 4,
    "int8": 5,
    "int16": 6,
    "int32": 7,
    "int64": 8,
    "uint8": 9,
    "bool": 10,
}
FLOAT_CODES = frozenset({1, 2, 3, 4})
I64 = DTYPE_CODES["int64"]
F64 = DTYPE_CODES["float64"]
BOOL = DTYPE_CODES["bool"]

TENSOR_LAYOUT = np.dtype(
    {
        "names": ["data", "dtype", "ndim", "shape", "direction"],
        "formats": [np.uintp, np.int32, np.int32, np.uintp, np.int32],
        "offsets": [0, 8, 12, 16, 24],
        "itemsize": 32,
    }
)
SCALAR_LAYOUT = np.dtype(
    {
        "names": ["dtype", "i", "f"],
        "formats": [np.int32, np.int64, np.float64],
        "offsets": [0, 8, 16],
        "itemsize": 24,
    }
)
INT64_RANGE = (-(2**63), 2**63 - 1)


@dataclass(frozen=True)
class Tensor:
    array: npt.NDArray[Any]
    direction: int

    @property
    def code(self) -> int:
        return DTYPE_CODES[self.array.dtype.name]


@dataclass(frozen=True)
class Scalar:
    code: int
    i: int = 0
    f: float = 0.0


def split_args(kernel: str, args: tuple[object, ...]) -> tuple[list[Tensor], list[Scalar]]:
    """The tensors and the scalars among ``args``, each kind in the order given."""
    tensors: list[Tensor] = []
    scalars: list[Scalar] = []
    for position, value in enumerate(args, start=1):
        if isinstance(value, Directed):
            tensors.append(_written(kernel, position, value))
        elif isinstance(value, np.ndarray):
            _check_dtype(kernel, position, value)
            tensors.append(Tensor(np.ascontiguousarray(value), IN))
        else:
            scalars.append(_scalar(kernel, position, value))
    return tensors, scalars


def _written(kernel: str, position: int, marked: Directed) -> Tensor:
    array = marked.array
    _check_dtype(kernel, position, array)
    # A copy would take the kernel's output and leave the caller's array untouched.
    if not array.flags.c_contiguous:
        raise ValueError(
            f"kernel {kernel!r}: argument {position} ({marked!r}) is not C-contiguous; "
            "pass numpy.ascontiguousarray(...) and read the result from it"
        )
    if not array.flags.writeable:
        raise ValueError(f"kernel {kernel!r}: argument {position} ({marked!r}) is read-only")
    return Tensor(array, marked.direction)


def _check_dtype(kernel: str, position: int, array: npt.NDArray[Any]) -> None:
    if array.dtype.name not in DTYPE_CODES or array.dtype.byteorder == ">":
        raise TypeError(
            f"kernel {kernel!r}: argument {position} has dtype {array.dtype}, which runner.h "
            f"cannot carry (supported: {', '.join(DTYPE_CODES)})"
        )


def _scalar(kernel: str, position: int, value: object) -> Scalar:
    if isinstance(value, (bool, np.bool_)):
        return Scalar(BOOL, i=int(value))
    if isinstance(value, np.generic):
        code = DTYPE_CODES.get(value.dtype.name)
        if code is None:
            raise TypeError(
                f"kernel {kernel!r}: argument {position} is a {value.dtype} scalar, which "
                f"runner.h cannot carry (supported: {', '.join(DTYPE_CODES)})"
            )
        if code in FLOAT_CODES:
            return Scalar(code, f=float(value))
        return Scalar(code, i=int(value))
    if isinstance(value, int):
        if not INT64_RANGE[0] <= value <= INT64_RANGE[1]:
            raise ValueError(f"kernel {kernel!r}: argument {position} ({value}) overflows int64")
        return Scalar(I64, i=value)
    if isinstance(value, float):
        return Scalar(F64, f=value)
    raise TypeError(
        f"kernel {kernel!r}: argument {position} is a {type(value).__name__}; expected a "
        "numpy.ndarray, Out(...)/InOut(...) of one, or an int, float or bool scalar"
    )


@dataclass(frozen=True)
class Packed:
    """The C arrays of one launch, and the buffers they point into (kept alive with them)."""

    tensors: npt.NDArray[Any]
    scalars: npt.NDArray[Any]
    shapes: npt.NDArray[np.int64]
    arrays: tuple[npt.NDArray[Any], ...]

    @staticmethod
    def address(buffer: npt.NDArray[Any]) -> int:
        return int(buffer.__array_interface__["data"][0])


def pack(tensors: list[Tensor], scalars: list[Scalar]) -> Packed:
    shapes = np.array([n for t in tensors for n in t.array.shape] or [0], dtype=np.int64)
    shapes_at = Packed.address(shapes)
    table = np.zeros(len(tensors), dtype=TENSOR_LAYOUT)
    offset = 0
    for row, t in enumerate(tensors):
        data = Packed.address(t.array) if t.array.size else 0
        table[row] = (data, t.code, t.array.ndim, shapes_at + 8 * offset, t.direction)
        offset += t.array.ndim
    values = np.zeros(len(scalars), dtype=SCALAR_LAYOUT)
    for row, s in enumerate(scalars):
        values[row] = (s.code, s.i, s.f)
    return Packed(table, values, shapes, tuple(t.array for t in tensors))
