"""The fake CUDA driver (tests/fake_cuda) fails the way a GPU does, so the CUDA runner's
recovery can be tested on machines without one: sticky errors, resets, memory, hangs."""

from __future__ import annotations

import ctypes
import importlib.util
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("fake_cuda_build", ROOT / "tests/fake_cuda/build.py")
assert _spec is not None and _spec.loader is not None
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)

if build.compiler() is None or build.cuda_header_dir() is None:
    pytest.skip(
        "the fake CUDA driver needs a C++ compiler and cuda.h (a CUDA toolkit; set CUDA_HOME)",
        allow_module_level=True,
    )

SUCCESS, INVALID_VALUE, OUT_OF_MEMORY, NOT_INITIALIZED = 0, 1, 2, 3
INVALID_DEVICE, INVALID_CONTEXT, FILE_NOT_FOUND, INVALID_HANDLE = 101, 201, 301, 400
NOT_FOUND, NOT_READY, ILLEGAL_ADDRESS, ASSERT, MISALIGNED, LAUNCH_FAILED = (
    500, 600, 700, 710, 716, 719,
)  # fmt: skip
MiB = 1 << 20
CC_MAJOR, CC_MINOR = 75, 76  # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR

P, U, INT, U64, SZ = ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_uint64, ctypes.c_size_t
SIGNATURES: dict[str, list[Any]] = {
    "cuInit": [U], "cuDriverGetVersion": [P], "cuDeviceGet": [P, INT],
    "cuDeviceGetName": [ctypes.c_char_p, INT, INT], "cuDeviceGetAttribute": [P, INT, INT],
    "cuDevicePrimaryCtxRetain": [P, INT], "cuDevicePrimaryCtxRelease_v2": [INT],
    "cuDevicePrimaryCtxReset_v2": [INT], "cuCtxGetCurrent": [P], "cuCtxSetCurrent": [P],
    "cuMemGetInfo_v2": [P, P], "cuMemAlloc_v2": [P, SZ], "cuMemFree_v2": [U64],
    "cuMemcpyHtoD_v2": [U64, P, SZ], "cuMemcpyDtoH_v2": [P, U64, SZ],
    "cuModuleLoad": [P, ctypes.c_char_p], "cuModuleUnload": [P],
    "cuModuleGetFunction": [P, P, ctypes.c_char_p], "cuStreamCreate": [P, U],
    "cuStreamDestroy_v2": [P], "cuStreamQuery": [P], "cuLaunchKernel": [P, *[U] * 7, P, P, P],
    "cuGetErrorName": [INT, P], "cuGetErrorString": [INT, P],
}  # fmt: skip
# The fake's test hooks, beside the driver API: they let a test wait for a state, not a time.
HOOKS: dict[str, list[Any]] = {"fake_cuda_waiting_for_idle": [], "fake_cuda_end_spins": []}


class Driver:
    """One fresh copy of the fake driver (its own process-wide state) and its calls."""

    def __init__(self, path: Path, module: Path) -> None:
        self.lib = ctypes.CDLL(str(path))
        for name, argtypes in {**SIGNATURES, **HOOKS}.items():
            getattr(self.lib, name).argtypes = argtypes
        self.lib.fake_cuda_end_spins.restype = None
        self.module_path = module

    def __getattr__(self, name: str) -> Any:
        return getattr(self.lib, name)

    def open(self, device: int = 0) -> tuple[int, int, int]:
        """cuInit, retain the primary context, make it current; (context, module, stream)."""
        ctx, module, stream = P(), P(), P()
        assert self.cuInit(0) == SUCCESS
        assert self.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), device) == SUCCESS
        assert self.cuCtxSetCurrent(ctx) == SUCCESS
        assert self.cuModuleLoad(ctypes.byref(module), bytes(self.module_path)) == SUCCESS
        assert self.cuStreamCreate(ctypes.byref(stream), 1) == SUCCESS
        return ctx.value or 0, module.value or 0, stream.value or 0

    def free_bytes(self) -> tuple[int, int]:
        free, total = SZ(), SZ()
        rc = self.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total))
        return rc, free.value

    def alloc(self, nbytes: int) -> int:
        ptr = U64()
        assert self.cuMemAlloc_v2(ctypes.byref(ptr), nbytes) == SUCCESS
        return ptr.value

    def to_device(self, array: np.ndarray) -> int:
        ptr = self.alloc(array.nbytes)
        assert self.cuMemcpyHtoD_v2(ptr, array.ctypes.data, array.nbytes) == SUCCESS
        return ptr

    def launch(self, module: int, stream: int, kernel: str, *params: Any, threads: int = 1) -> int:
        """Launches as the runner does (blocks of 256 threads); the launch's rc."""
        fn = P()
        assert self.cuModuleGetFunction(ctypes.byref(fn), module, kernel.encode()) == SUCCESS
        values = (P * max(len(params), 1))(*[ctypes.addressof(p) for p in params])
        blocks, block = (threads + 255) // 256, min(threads, 256)
        return self.cuLaunchKernel(fn, blocks, 1, 1, block, 1, 1, 0, stream, values, None)


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build.build_fake_driver(tmp_path_factory.mktemp("fake_cuda"))


@pytest.fixture
def cuda(library: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Driver:
    """A fresh driver: a copy at a new path is loaded anew, with state of its own."""
    monkeypatch.delenv("FAKE_CUDA_DEVICES", raising=False)
    monkeypatch.delenv("FAKE_CUDA_RESET_HEALS", raising=False)
    copy = tmp_path / "libcuda.so.1"
    shutil.copyfile(library, copy)
    module = tmp_path / "kernels.fatbin"
    module.write_bytes(b"never read by the fake")
    return Driver(copy, module)


def test_exports_are_the_runners_calls_under_the_real_drivers_versioned_names(
    library: Path,
) -> None:
    if shutil.which("nm") is None:
        pytest.skip("nm (binutils) is not installed")
    listing = subprocess.run(["nm", "-D", "--defined-only", str(library)], capture_output=True,
                             text=True, check=True).stdout  # fmt: skip
    exported = {line.split()[-1] for line in listing.splitlines() if " T " in line}
    assert exported == set(SIGNATURES) | set(HOOKS)


def test_nothing_but_the_version_and_error_names_answers_before_cuInit(cuda: Driver) -> None:
    device, version, name = INT(), INT(), ctypes.c_char_p()
    assert cuda.cuDeviceGet(ctypes.byref(device), 0) == NOT_INITIALIZED
    assert cuda.cuMemAlloc_v2(ctypes.byref(U64()), 16) == NOT_INITIALIZED
    assert cuda.cuDriverGetVersion(ctypes.byref(version)) == SUCCESS and version.value == 13000
    assert cuda.cuGetErrorName(NOT_INITIALIZED, ctypes.byref(name)) == SUCCESS
    assert name.value == b"CUDA_ERROR_NOT_INITIALIZED"


def test_devices_count_name_and_compute_capability(
    cuda: Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CUDA_DEVICES", "3")
    device, major, minor, name = INT(), INT(), INT(), ctypes.create_string_buffer(64)
    assert cuda.cuInit(0) == SUCCESS
    assert cuda.cuDeviceGet(ctypes.byref(device), 2) == SUCCESS
    assert cuda.cuDeviceGet(ctypes.byref(device), 3) == INVALID_DEVICE
    assert cuda.cuDeviceGetName(name, 64, 2) == SUCCESS and name.value == b"Fake CUDA Device"
    assert cuda.cuDeviceGetAttribute(ctypes.byref(major), CC_MAJOR, 0) == SUCCESS
    assert cuda.cuDeviceGetAttribute(ctypes.byref(minor), CC_MINOR, 0) == SUCCESS
    assert (major.value, minor.value) == (9, 0)


def test_context_calls_without_a_current_context_are_refused(cuda: Driver) -> None:
    assert cuda.cuInit(0) == SUCCESS
    assert cuda.cuMemAlloc_v2(ctypes.byref(U64()), 16) == INVALID_CONTEXT
    assert cuda.free_bytes()[0] == INVALID_CONTEXT


@pytest.mark.parametrize(
    ("kernel", "dtype", "golden"),
    [
        ("simpler_vector_add_f32", np.float32, lambda a, b: a + b),
        ("simpler_vector_add_i64", np.int64, lambda a, b: a + b),
        ("simpler_scale_f64", np.float64, lambda a, alpha: a * alpha),
        ("simpler_scale_i32", np.int32, lambda a, alpha: a * alpha),
    ],
)
def test_elementwise_kernels_compute_what_kernels_cu_computes(
    cuda: Driver, kernel: str, dtype: Any, golden: Any
) -> None:
    _, module, stream = cuda.open()
    n = 1000  # not a multiple of the block: the last block is partial
    a, b = np.arange(n, dtype=dtype), np.full(n, 3, dtype=dtype)
    out = np.zeros(n, dtype=dtype)
    pa, pout = U64(cuda.to_device(a)), U64(cuda.alloc(out.nbytes))
    scale = "scale" in kernel
    second = np.ctypeslib.as_ctypes_type(dtype)(3) if scale else U64(cuda.to_device(b))
    n_param = ctypes.c_longlong(n)
    assert cuda.launch(module, stream, kernel, pa, second, pout, n_param, threads=n) == SUCCESS
    assert cuda.cuStreamQuery(stream) == SUCCESS
    assert cuda.cuMemcpyDtoH_v2(out.ctypes.data, pout, out.nbytes) == SUCCESS
    np.testing.assert_array_equal(out, golden(a, dtype(3) if scale else b))


def test_matmul_and_softmax_match_their_goldens(cuda: Driver) -> None:
    _, module, stream = cuda.open()
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((5, 7), np.float32), rng.standard_normal((7, 3), np.float32)
    out = np.zeros((5, 3), np.float32)
    pa, pb, pout = U64(cuda.to_device(a)), U64(cuda.to_device(b)), U64(cuda.alloc(out.nbytes))
    sizes = [ctypes.c_longlong(v) for v in (5, 7, 3)]
    assert cuda.launch(module, stream, "simpler_matmul_f32", pa, pb, pout, *sizes, threads=15) == 0
    assert cuda.cuMemcpyDtoH_v2(out.ctypes.data, pout, out.nbytes) == SUCCESS
    np.testing.assert_array_equal(out, (a.astype(np.float64) @ b).astype(np.float32))
    rows = np.zeros((5, 7), np.float32)
    prow = U64(cuda.alloc(rows.nbytes))
    dims = [ctypes.c_longlong(5), ctypes.c_longlong(7)]
    assert cuda.launch(module, stream, "simpler_softmax_f32", pa, prow, *dims, threads=5) == 0
    assert cuda.cuMemcpyDtoH_v2(rows.ctypes.data, prow, rows.nbytes) == SUCCESS
    shifted = np.exp(a.astype(np.float64) - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(rows, shifted / shifted.sum(axis=1, keepdims=True), rtol=1e-6)


def test_threads_beyond_the_grid_never_run(cuda: Driver) -> None:
    _, module, stream = cuda.open()
    a = np.ones(300, np.float32)
    out = np.zeros(300, np.float32)
    pa, pout = U64(cuda.to_device(a)), U64(cuda.to_device(out))
    n = ctypes.c_longlong(300)
    assert cuda.launch(module, stream, "simpler_vector_add_f32", pa, pa, pout, n, threads=256) == 0
    assert cuda.cuMemcpyDtoH_v2(out.ctypes.data, pout, out.nbytes) == SUCCESS
    assert (out[:256] == 2).all() and (out[256:] == 0).all()


def test_a_kernel_reading_unmapped_memory_faults_instead_of_crashing(cuda: Driver) -> None:
    _, module, stream = cuda.open()
    bogus, n = U64(0x100), ctypes.c_longlong(64)
    kernel = "simpler_vector_add_f32"
    assert cuda.launch(module, stream, kernel, bogus, bogus, bogus, n, threads=64) == SUCCESS
    assert cuda.cuStreamQuery(stream) == ILLEGAL_ADDRESS


@pytest.mark.parametrize(
    ("kernel", "code"),
    [("simpler_illegal_address", ILLEGAL_ADDRESS), ("simpler_trap", LAUNCH_FAILED),
     ("simpler_device_assert", ASSERT), ("simpler_misaligned", MISALIGNED)],
)  # fmt: skip
def test_a_fault_returns_the_same_error_from_every_later_call_on_its_context(
    cuda: Driver, kernel: str, code: int
) -> None:
    ctx, module, stream = cuda.open()
    scratch = cuda.alloc(4096)
    params = {
        "simpler_illegal_address": [U64(0x100)], "simpler_trap": [],
        "simpler_device_assert": [INT(0)], "simpler_misaligned": [U64(scratch), U64(scratch + 64)],
    }[kernel]  # fmt: skip
    noop = P()
    assert cuda.cuModuleGetFunction(ctypes.byref(noop), module, b"simpler_noop") == SUCCESS
    assert cuda.launch(module, stream, kernel, *params) == SUCCESS  # asynchronous, as on a GPU
    host = np.zeros(4, np.float32)
    later = [
        cuda.cuStreamQuery(stream),
        cuda.cuStreamQuery(stream),
        cuda.cuMemAlloc_v2(ctypes.byref(U64()), 16),
        cuda.cuMemcpyHtoD_v2(scratch, host.ctypes.data, host.nbytes),
        cuda.cuMemcpyDtoH_v2(host.ctypes.data, scratch, host.nbytes),
        cuda.free_bytes()[0],
        cuda.cuModuleLoad(ctypes.byref(P()), bytes(cuda.module_path)),
        cuda.cuLaunchKernel(noop, 1, 1, 1, 1, 1, 1, 0, stream, None, None),
        cuda.cuModuleGetFunction(ctypes.byref(noop), module, b"simpler_noop"),
        cuda.cuMemFree_v2(scratch),
    ]
    assert later == [code] * len(later)
    # Calls that need no context answer as ever, and the context's handle stays valid.
    name, device = ctypes.c_char_p(), INT()
    assert cuda.cuGetErrorName(code, ctypes.byref(name)) == SUCCESS
    assert cuda.cuDeviceGet(ctypes.byref(device), 0) == SUCCESS
    assert cuda.cuCtxSetCurrent(ctx) == SUCCESS


def test_a_reset_destroys_the_context_heals_it_and_gives_its_memory_back(cuda: Driver) -> None:
    old, module, stream = cuda.open()
    baseline = cuda.free_bytes()
    assert baseline == (SUCCESS, 1024 * MiB - 256 * MiB)  # total less the context's overhead
    cuda.alloc(1)
    cuda.alloc(3 * MiB)
    assert cuda.free_bytes() == (SUCCESS, baseline[1] - 6 * MiB)  # 2 MiB pages
    assert cuda.launch(module, stream, "simpler_trap") == SUCCESS
    assert cuda.free_bytes()[0] == LAUNCH_FAILED
    assert cuda.cuDevicePrimaryCtxReset_v2(0) == SUCCESS
    assert cuda.cuCtxSetCurrent(old) == INVALID_CONTEXT  # the handle died with its context
    assert cuda.cuStreamQuery(stream) == INVALID_CONTEXT
    fresh = P()
    assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(fresh), 0) == SUCCESS
    assert fresh.value != old and cuda.cuCtxSetCurrent(fresh) == SUCCESS
    assert cuda.free_bytes() == baseline


def test_retain_release_count_and_a_reset_does_not_release(cuda: Driver) -> None:
    ctx, _, _ = cuda.open()
    again = P()
    assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(again), 0) == SUCCESS
    assert again.value == ctx  # one primary context per device
    assert cuda.cuDevicePrimaryCtxRelease_v2(0) == SUCCESS
    assert cuda.cuCtxSetCurrent(ctx) == SUCCESS  # one retain left: still alive
    assert cuda.cuDevicePrimaryCtxReset_v2(0) == SUCCESS  # count stays 1
    assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(again), 0) == SUCCESS  # count 2
    assert cuda.cuDevicePrimaryCtxRelease_v2(0) == SUCCESS
    assert cuda.cuCtxSetCurrent(again) == SUCCESS
    assert cuda.cuDevicePrimaryCtxRelease_v2(0) == SUCCESS  # count 0: destroyed
    assert cuda.cuCtxSetCurrent(again) == INVALID_CONTEXT
    assert cuda.cuDevicePrimaryCtxRelease_v2(0) == INVALID_CONTEXT  # nothing left to release


def test_memory_errors(cuda: Driver) -> None:
    cuda.open()
    ptr = cuda.alloc(64)
    host = np.zeros(32, np.float32)  # 128 bytes: more than the allocation holds
    assert cuda.cuMemcpyHtoD_v2(ptr, host.ctypes.data, host.nbytes) == INVALID_VALUE
    assert cuda.cuMemAlloc_v2(ctypes.byref(U64()), 1024 * MiB) == OUT_OF_MEMORY
    assert cuda.cuMemFree_v2(ptr) == SUCCESS
    assert cuda.cuMemFree_v2(ptr) == INVALID_VALUE
    assert cuda.cuMemcpyHtoD_v2(ptr, host.ctypes.data, 4) == INVALID_VALUE


def test_modules_need_their_file_and_know_the_kernels_cu_symbols(cuda: Driver) -> None:
    _, module, _ = cuda.open()
    fn = P()
    assert cuda.cuModuleLoad(ctypes.byref(P()), b"/nonexistent/kernels.fatbin") == FILE_NOT_FOUND
    assert cuda.cuModuleGetFunction(ctypes.byref(fn), module, b"simpler_nope") == NOT_FOUND
    assert cuda.cuModuleGetFunction(ctypes.byref(fn), module, b"simpler_softmax_f32") == SUCCESS
    assert cuda.cuModuleUnload(module) == SUCCESS
    assert cuda.cuModuleGetFunction(ctypes.byref(fn), module, b"simpler_noop") == INVALID_HANDLE


def _until(condition: Any, what: str) -> None:
    """Polls ``condition`` until it holds; the deadline only guards against a hang."""
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what} after 60 s"
        time.sleep(0.001)


def test_a_spin_keeps_its_stream_busy_until_its_time_is_up(cuda: Driver) -> None:
    _, module, stream = cuda.open()
    assert cuda.launch(module, stream, "simpler_spin", ctypes.c_ulonglong(1)) == SUCCESS
    _until(lambda: cuda.cuStreamQuery(stream) == SUCCESS, "a 1 ns spin to end")
    hour = ctypes.c_ulonglong(3600 * 10**9)
    assert cuda.launch(module, stream, "simpler_spin", hour) == SUCCESS
    assert cuda.cuStreamQuery(stream) == NOT_READY
    cuda.fake_cuda_end_spins()
    assert cuda.cuStreamQuery(stream) == SUCCESS


def test_a_reset_waits_for_a_running_spin_without_blocking_other_calls(cuda: Driver) -> None:
    _, module, stream = cuda.open()
    hour = ctypes.c_ulonglong(3600 * 10**9)  # ends only when the test ends it
    assert cuda.launch(module, stream, "simpler_spin", hour) == SUCCESS
    reset_rc: list[int] = []
    resetter = threading.Thread(
        target=lambda: reset_rc.append(cuda.cuDevicePrimaryCtxReset_v2(0)), daemon=True
    )
    resetter.start()
    try:
        _until(lambda: cuda.fake_cuda_waiting_for_idle() == 1, "the reset to wait for the spin")
        # The waiting reset holds no lock: this thread's query still answers, the kernel runs.
        assert cuda.cuStreamQuery(stream) == NOT_READY
        assert resetter.is_alive() and reset_rc == []
    finally:
        cuda.fake_cuda_end_spins()  # the reset's wait ends with the spin, passed or failed
        resetter.join(timeout=60)
    assert not resetter.is_alive() and reset_rc == [SUCCESS]
    assert cuda.fake_cuda_waiting_for_idle() == 0
    assert cuda.cuStreamQuery(stream) == INVALID_CONTEXT


_AFTER_A_FAULT_AND_A_RESET = """
import ctypes, sys
cuda = ctypes.CDLL(sys.argv[1])
ctx, mod, fn, free, total = (ctypes.c_void_p() for _ in range(5))
def open_context():
    cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0)
    cuda.cuCtxSetCurrent(ctx)
    return cuda.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total))
cuda.cuInit(0)
clean = open_context()
if sys.argv[2] == "fault":
    cuda.cuModuleLoad(ctypes.byref(mod), sys.argv[1].encode())
    cuda.cuModuleGetFunction(ctypes.byref(fn), mod, b"simpler_trap")
    cuda.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, None, None)
    cuda.cuDevicePrimaryCtxReset_v2(0)
print(clean, open_context())
"""


@pytest.mark.parametrize(
    ("heals", "after_reset"), [(None, SUCCESS), ("1", SUCCESS), ("0", LAUNCH_FAILED)]
)
def test_whether_a_reset_heals_is_set_per_process_by_the_environment(
    library: Path, heals: str | None, after_reset: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FAKE_CUDA_RESET_HEALS", raising=False)
    if heals is not None:
        monkeypatch.setenv("FAKE_CUDA_RESET_HEALS", heals)

    def run(mode: str) -> list[str]:
        command = [sys.executable, "-c", _AFTER_A_FAULT_AND_A_RESET, str(library), mode]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout.split()

    assert run("fault") == [str(SUCCESS), str(after_reset)]
    assert run("clean") == [str(SUCCESS), str(SUCCESS)]  # a fresh process is always clean


@pytest.mark.parametrize(
    ("code", "name"),
    [(0, "CUDA_SUCCESS"), (1, "CUDA_ERROR_INVALID_VALUE"), (2, "CUDA_ERROR_OUT_OF_MEMORY"),
     (101, "CUDA_ERROR_INVALID_DEVICE"), (201, "CUDA_ERROR_INVALID_CONTEXT"),
     (301, "CUDA_ERROR_FILE_NOT_FOUND"), (500, "CUDA_ERROR_NOT_FOUND"),
     (600, "CUDA_ERROR_NOT_READY"), (700, "CUDA_ERROR_ILLEGAL_ADDRESS"), (710, "CUDA_ERROR_ASSERT"),
     (716, "CUDA_ERROR_MISALIGNED_ADDRESS"), (719, "CUDA_ERROR_LAUNCH_FAILED"),
     (999, "CUDA_ERROR_UNKNOWN")],
)  # fmt: skip
def test_error_names_and_strings(cuda: Driver, code: int, name: str) -> None:
    found, text = ctypes.c_char_p(), ctypes.c_char_p()
    assert cuda.cuGetErrorName(code, ctypes.byref(found)) == SUCCESS
    assert found.value == name.encode()
    assert cuda.cuGetErrorString(code, ctypes.byref(text)) == SUCCESS and text.value


def test_an_unknown_error_code_has_no_name(cuda: Driver) -> None:
    found = ctypes.c_char_p(b"stale")
    assert cuda.cuGetErrorName(12345, ctypes.byref(found)) == INVALID_VALUE and found.value is None
