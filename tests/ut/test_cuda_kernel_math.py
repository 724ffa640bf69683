"""The CUDA kernels' arithmetic, checked against numpy without a GPU.

kernels.cu's kernels index and bounds-check their threads and call kernel_math.h for what
each thread computes. Here kernels.cu itself is compiled for the host
(tests/host_kernels/cuda_on_host.h, host_kernels.cpp) and its kernels are launched as the
runner launches them, on the runner's own grid: every kernel, every dtype, edge sizes
included.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
CUDA_DIR = ROOT / "simpler" / "runner" / "cuda"
HOST_DIR = ROOT / "tests" / "host_kernels"
SOURCES = (
    HOST_DIR / "host_kernels.cpp",
    HOST_DIR / "cuda_on_host.h",
    CUDA_DIR / "kernels.cu",
    CUDA_DIR / "kernel_math.h",
)
FLAGS = ("-std=c++17", "-O2", "-fPIC", "-shared", "-Wall", "-Wextra")
DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}
# The runner's launch geometry (cudacard.cpp): blocks of this many threads, 1-D.
_block = re.search(
    r"constexpr int kThreadsPerBlock = (\d+);", (CUDA_DIR / "cudacard.cpp").read_text()
)
assert _block, "cudacard.cpp no longer names its block size kThreadsPerBlock"
BLOCK = int(_block.group(1))
SIZES = (0, 1, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 17)


def runner_grid(threads: int) -> tuple[int, int]:
    """(blocks, threads per block) as cudacard.cpp launches ``threads`` threads.

    The runner skips the launch of an empty tensor; here it runs one thread anyway, which
    the kernel's bounds check must turn into nothing.
    """
    threads = max(threads, 1)
    return (threads + BLOCK - 1) // BLOCK, min(threads, BLOCK)


def _compiler() -> str | None:
    return shutil.which(os.environ.get("CXX") or "c++") or shutil.which("g++")


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    """The host build of the kernels, compiled once per hash of its sources and flags."""
    cxx = _compiler()
    if cxx is None:
        pytest.skip("no C++ compiler (c++, g++ or $CXX) to build kernel_math.h for the host")
    key = hashlib.sha256(" ".join((cxx, *FLAGS)).encode())
    for source in SOURCES:
        key.update(source.read_bytes())
    target = tmp_path_factory.getbasetemp() / "host_kernels" / key.hexdigest()[:16] / "lib.so"
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"lib.so.{os.getpid()}.partial")  # renamed: never half-read
        command = [
            cxx,
            *FLAGS,
            f"-I{CUDA_DIR}",
            f"-I{HOST_DIR}",
            "-o",
            str(partial),
            str(SOURCES[0]),
        ]
        built = subprocess.run(command, capture_output=True, text=True)
        assert built.returncode == 0, built.stderr
        os.replace(partial, target)
    return ctypes.CDLL(str(target))


def _launch(host: ctypes.CDLL, name: str, threads: int, *params: Any) -> None:
    getattr(host, name)(*map(ctypes.c_uint, runner_grid(threads)), *params)


def _ptr(array: np.ndarray) -> ctypes.c_void_p:
    return ctypes.c_void_p(array.ctypes.data)


def _values(dtype: Any, n: int, rng: np.random.Generator) -> np.ndarray:
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-1000, 1000, n).astype(dtype)
    return rng.standard_normal(n).astype(dtype)


def _padded(n: int, dtype: Any) -> np.ndarray:
    """An output of n elements and a block more, set to a value no kernel writes here."""
    return np.full(n + BLOCK, 77, dtype)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("suffix", sorted(DTYPES))
@pytest.mark.parametrize("kernel", ["vector_add", "scale"])
def test_elementwise_kernels_match_numpy(
    host: ctypes.CDLL, kernel: str, suffix: str, n: int
) -> None:
    dtype = DTYPES[suffix]
    rng = np.random.default_rng(n)
    a, b, out = _values(dtype, n, rng), _values(dtype, n, rng), _padded(n, dtype)
    size = ctypes.c_longlong(n)
    if kernel == "vector_add":
        _launch(host, f"host_vector_add_{suffix}", n, _ptr(a), _ptr(b), _ptr(out), size)
        golden = a + b
    else:
        alpha = dtype(-3) if suffix.startswith("i") else dtype(-1.5)
        scalar = np.ctypeslib.as_ctypes_type(dtype)(alpha)
        _launch(host, f"host_scale_{suffix}", n, _ptr(a), scalar, _ptr(out), size)
        golden = a * alpha
    np.testing.assert_array_equal(out[:n], golden)  # one rounding each, as numpy's
    assert (out[n:] == 77).all(), "a thread past the data wrote"


def test_a_grid_smaller_than_the_data_leaves_a_tail(host: ctypes.CDLL) -> None:
    # The emulated launch runs the grid's threads, not the data's: too few threads, a tail.
    a, out = np.ones(BLOCK + 44, np.float32), np.zeros(BLOCK + 44, np.float32)
    size = ctypes.c_longlong(a.size)
    host.host_vector_add_f32(
        ctypes.c_uint(1), ctypes.c_uint(BLOCK), _ptr(a), _ptr(a), _ptr(out), size
    )
    assert (out[:BLOCK] == 2).all() and (out[BLOCK:] == 0).all()


@pytest.mark.parametrize(
    ("m", "k", "n"),
    [(0, 3, 4), (3, 4, 0), (0, 0, 0), (3, 0, 4), (1, 1, 1), (5, 7, 3), (17, 33, 19), (16, 2, 16)],
)  # m*n = 0 (nothing to compute), k = 0 (zeros), one element, 323 and 256 threads
def test_matmul_matches_numpy(host: ctypes.CDLL, m: int, k: int, n: int) -> None:
    rng = np.random.default_rng(m * 10_000 + k * 100 + n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    out = np.full(m * n + BLOCK, np.nan, np.float32)
    sizes = [ctypes.c_longlong(v) for v in (m, k, n)]
    _launch(host, "host_matmul_f32", m * n, _ptr(a), _ptr(b), _ptr(out), *sizes)
    # Summed in double and rounded once: the float64 product rounded to float32, to an ulp
    # (numpy sums in another order); atol for a dot product that cancels to almost nothing.
    golden = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32).ravel()
    np.testing.assert_allclose(out[: m * n], golden, rtol=2**-23, atol=1e-12)
    assert np.isnan(out[m * n :]).all(), "a thread past the data wrote"


def _softmax(x: np.ndarray) -> np.ndarray:
    """The float64 reference, rounded to float32 once at the end."""
    shifted = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return (shifted / shifted.sum(axis=1, keepdims=True)).astype(np.float32)


def _check_softmax(host: ctypes.CDLL, x: np.ndarray) -> None:
    rows, cols = x.shape
    out = np.full(x.size + BLOCK, np.nan, np.float32)
    dims = [ctypes.c_longlong(rows), ctypes.c_longlong(cols)]
    _launch(host, "host_softmax_f32", rows, _ptr(x), _ptr(out), *dims)
    got = out[: x.size].reshape(x.shape)
    if rows:
        # Element by element, to an ulp: a row sum of 1 would hide a wrong element.
        np.testing.assert_allclose(got, _softmax(x), rtol=2**-23, atol=0)
    assert np.isnan(out[x.size :]).all(), "a thread past the data wrote"


@pytest.mark.parametrize(
    ("rows", "cols"), [(0, 5), (1, 1), (6, 9), (BLOCK + 3, 4), (2, 1000), (BLOCK, 3)]
)
def test_softmax_matches_numpy_element_by_element(host: ctypes.CDLL, rows: int, cols: int) -> None:
    rng = np.random.default_rng(rows * 1000 + cols)
    _check_softmax(host, (3 * rng.standard_normal((rows, cols))).astype(np.float32))


def test_softmax_shifts_by_the_row_maximum(host: ctypes.CDLL) -> None:
    # exp(1000) overflows even a double: only the max shift gives these rows an answer.
    x = np.array([[1000, 1001, 999.5], [-1000, -1001, -1002], [7, 7, 7]], np.float32)
    _check_softmax(host, x)
