"""Load the C++ runner into cppyy, once per process.

The simulated card is a shared library cached under its sources' hash (cling compiles it
in-process where no C++ compiler is found); platform ``cuda`` loads its runner the same way,
after the driver (``cuda_driver.py``). ``SIMPLER_RUNNER_LIBRARY`` (and ``SIMPLER_RUNNER_HEADER``)
names a library implementing runner.h that runs every platform; one built against another
runner.h ABI is refused with one line (docs/reference.md, The device runner).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simpler.contract.child import ChildContract
from simpler.contract.settings import (
    CACHE_DIR_ENV,
    CUDA_SPIN_MS_ENV,
    RUNNER_HEADER_ENV,
    RUNNER_LIBRARY_ENV,
    positive_int_env,
)
from simpler.runner.faults import FaultPlan

__all__ = [
    "RUNNER_ABI",
    "NativeLibrary",
    "RunnerLibraryError",
    "cache_dir",
    "check_user_library",
    "is_loaded",
    "load",
    "simulator_library",
]

SOURCE_DIR = Path(__file__).resolve().parent
SIM_KERNEL_SOURCES = ("simkernels/plan.h", "simkernels/elementwise.h", "simkernels/matmul.h",
                      "simkernels/softmax.h")  # fmt: skip
SIM_SOURCES = ("runner.h", "launch_faults.h", "simcard.h", "simkernels.h", *SIM_KERNEL_SOURCES,
               "simcard.cpp")  # fmt: skip
KERNEL_SOURCES_EXPORT = "simpler_kernel_sources"  # optional: runner.h says what it returns
# runner.h's SIMPLER_RUNNER_ABI: the version this package's Python side marshals for.
RUNNER_ABI = 2
LIBRARY_EXPORTS = ("simpler_runner_abi", "simpler_create_runner", "simpler_destroy_runner")
CXX_FLAGS = ("-std=c++17", "-O2", "-fPIC", "-shared", "-pthread")
# The calls that may wait on the card: cppyy lets other Python threads run meanwhile.
GIL_RELEASING_METHODS = ("init", "run", "drain", "soft_reset", "force_reset", "probe", "finalize")
LAUNCH_FAULT_KINDS = {"hang": 1, "launch_fail": 2, "stuck": 3}  # simcard.h SIMPLER_SIM_*
CUDA_FAULT_KINDS = {  # cudacard.h SIMPLER_CUDA_*
    "illegal_address": 1,
    "trap": 2,
    "device_assert": 3,
    "misaligned": 4,
    "hang": 5,
}
SIM, CUDA, USER = "sim", "cuda", "user"


@dataclass
class NativeLibrary:
    gbl: Any  # cppyy.gbl, with the runner's declarations loaded
    nullptr: Any
    kind: str  # SIM, CUDA or USER
    origin: str  # "cached-library", "built-library", "jit" or the user's library path
    tensor_pointer: Any  # address -> const simpler_tensor*
    scalar_pointer: Any  # address -> const simpler_scalar*
    create: Any  # the runner factory: (platform, runtime, device, op_timeout_ms) -> runner*
    destroy: Any
    # (platform, kernel) -> the library's answer (one source per line), or None: it says none.
    sources_of: Callable[[str, str], str | None] = lambda platform, kernel: None
    sources_root: Path = field(default_factory=Path.cwd)  # where its relative paths start

    def kernel_sources(self, platform: str, kernel: str) -> tuple[str, ...]:
        """The files ``kernel`` was built from (absolute), as the library says; () when it
        does not (then a change to its C++ is one no kernel accounts for)."""
        answer = self.sources_of(platform, kernel) or ""
        named = [line.strip() for line in answer.splitlines() if line.strip()]
        return tuple(str(self.sources_root / path) for path in named)

    def push_faults(self, plan: FaultPlan) -> None:
        # Each runner takes the kinds it injects; the rest were refused for its platform.
        if self.kind == SIM:
            self.gbl.simpler_sim_clear_faults()
            self.gbl.simpler_sim_set_flags(
                plan.has("force_reset_fail"),
                plan.has("drain_false_negative"),
                plan.has("init_fail"),
            )
            add, kinds = self.gbl.simpler_sim_add_launch_fault, LAUNCH_FAULT_KINDS
        elif self.kind == CUDA:
            self.gbl.simpler_cuda_clear_faults()
            add, kinds = self.gbl.simpler_cuda_add_fault, CUDA_FAULT_KINDS
        else:
            return
        for fault in plan.launches:
            if fault.kind in kinds:
                add(kinds[fault.kind], fault.selector, fault.attempt or 0)

    def push_test(self, nodeid: str, attempt: int) -> None:
        if self.kind == SIM:
            self.gbl.simpler_sim_set_test(nodeid, attempt)
        elif self.kind == CUDA:
            self.gbl.simpler_cuda_set_test(nodeid, attempt)


class RunnerLibraryError(RuntimeError):
    """SIMPLER_RUNNER_LIBRARY names a library simpler cannot drive."""


_lock = threading.Lock()
_loaded: dict[str, NativeLibrary] = {}


def kind_for(platform: str | None) -> str:
    if os.environ.get(RUNNER_LIBRARY_ENV):
        return USER
    return CUDA if platform == "cuda" else SIM


def load(platform: str | None = None) -> NativeLibrary:
    """The runner library for ``platform``, loading it on first use."""
    kind = kind_for(platform)
    with _lock:
        if kind not in _loaded:
            _loaded[kind] = _load_uncached(kind)
        return _loaded[kind]


def preload() -> None:
    """Load the library of the platform the run told this process now, touching no device: a
    warm process does, so that each child forked from it starts with the library in place."""
    native = load(ChildContract.from_env(os.environ).platform or None)
    # Every test tells the library which test runs (fault selectors): cppyy compiles that
    # call's wrapper on its first use, milliseconds a child forked from here need not pay.
    native.push_test("simpler warm-up", 1)  # an empty name takes another path: a real one
    native.push_test("", 1)


def loaded() -> list[NativeLibrary]:
    with _lock:
        return list(_loaded.values())


def cache_dir() -> Path:
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "simpler"


def _load_uncached(kind: str) -> NativeLibrary:
    user_library = os.environ.get(RUNNER_LIBRARY_ENV)
    if kind == USER:
        check_user_library(user_library or "")
    elif kind == CUDA:
        from simpler.runner import cuda_driver

        cuda_driver.require_driver()  # before cling: no driver is one line, not a link error
    import cppyy  # deferred: only device-touching commands pay for cling
    import cppyy.ll

    cppyy.add_include_path(str(SOURCE_DIR))
    create, destroy = "simpler_create_runner", "simpler_destroy_runner"
    if kind == USER:
        header = os.environ.get(RUNNER_HEADER_ENV) or str(SOURCE_DIR / "runner.h")
        cppyy.include(header)
        _check_header(cppyy, header)
        cppyy.load_library(user_library)
        origin = user_library or ""
    elif kind == CUDA:
        cppyy.include(str(SOURCE_DIR / "runner.h"))
        origin = cuda_driver.load_runner(cppyy, _build, cache_dir(), CXX_FLAGS)
        create, destroy = "simpler_cuda_create_runner", "simpler_cuda_destroy_runner"
        # A reset measured while a kernel runs may block: other threads must still run.
        cppyy.gbl.simpler_cuda_raw_primary_ctx_reset.__release_gil__ = True
        spin_ms = positive_int_env(CUDA_SPIN_MS_ENV, 0)  # 0: the runner's own default
        if spin_ms:
            cppyy.gbl.simpler_cuda_set_spin_ms(spin_ms)
    else:
        cppyy.include(str(SOURCE_DIR / "runner.h"))
        cppyy.include(str(SOURCE_DIR / "simcard.h"))
        origin = _load_simulator(cppyy)
    runner_class = cppyy.gbl.simpler.DeviceRunner
    for name in GIL_RELEASING_METHODS:
        getattr(runner_class, name).__release_gil__ = True
    return NativeLibrary(
        cppyy.gbl,
        cppyy.nullptr,
        kind,
        origin,
        cppyy.ll.cast["const simpler_tensor*"],
        cppyy.ll.cast["const simpler_scalar*"],
        getattr(cppyy.gbl, create),
        getattr(cppyy.gbl, destroy),
        *_kernel_sources_answer(cppyy, kind, user_library),
    )


def _kernel_sources_answer(
    cppyy: Any, kind: str, user_library: str | None
) -> tuple[Callable[[str, str], str | None], Path]:
    """How to ask the library which sources a kernel was built from, and where its relative
    answers start: the simulated card's own source directory, or the run's root for a
    user's library (which may not export the function: then it says nothing)."""
    if kind == SIM:
        return lambda platform, kernel: str(
            cppyy.gbl.simpler_kernel_sources(platform, kernel) or ""
        ), SOURCE_DIR
    if kind == USER and user_library:
        # ctypes, not cppyy: cling cannot be asked whether an optional symbol exists.
        handle = ctypes.CDLL(user_library, mode=ctypes.RTLD_GLOBAL)
        if hasattr(handle, KERNEL_SOURCES_EXPORT):
            answer = getattr(handle, KERNEL_SOURCES_EXPORT)
            answer.restype, answer.argtypes = ctypes.c_char_p, [ctypes.c_char_p, ctypes.c_char_p]

            def sources_of(platform: str, kernel: str) -> str | None:
                said = answer(platform.encode(), kernel.encode())
                return said.decode("utf-8", "replace") if said else None

            return sources_of, Path.cwd()
    return (lambda platform, kernel: None), Path.cwd()


def check_user_library(path: str) -> None:
    """Refuse a library simpler cannot call safely, before cppyy binds to it.

    A library built against another runner.h has other vtables and signatures:
    calling it would crash the interpreter, so its ABI version is read first
    through ctypes, which binds nothing.
    """
    try:
        # Global, as cppyy loads it: the same handle must resolve its symbols for cling.
        handle = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as error:
        message = f"{RUNNER_LIBRARY_ENV} {path}: cannot load it ({error})"
        raise RunnerLibraryError(message) from None
    missing = [name for name in LIBRARY_EXPORTS if not hasattr(handle, name)]
    if "simpler_runner_abi" in missing:
        raise RunnerLibraryError(
            f"{RUNNER_LIBRARY_ENV} {path} does not export simpler_runner_abi(): it was built "
            f"against an older runner.h; rebuild it against runner.h ABI {RUNNER_ABI}"
        )
    if missing:
        raise RunnerLibraryError(
            f"{RUNNER_LIBRARY_ENV} {path} does not export {', '.join(missing)} "
            f'(runner.h ABI {RUNNER_ABI} needs {", ".join(LIBRARY_EXPORTS)} as extern "C")'
        )
    abi = handle.simpler_runner_abi
    abi.restype, abi.argtypes = ctypes.c_int, []
    built_against = abi()
    if built_against != RUNNER_ABI:
        raise RunnerLibraryError(
            f"{RUNNER_LIBRARY_ENV} {path} was built against runner.h ABI {built_against}; "
            f"this simpler needs ABI {RUNNER_ABI}: rebuild it against simpler/runner/runner.h"
        )


def _check_header(cppyy: Any, header: str) -> None:
    # Python lays out the launch structs for this version: another header's would not match.
    try:
        declared = int(cppyy.macro("SIMPLER_RUNNER_ABI"))
    except ValueError:
        declared = 1  # the first header had no version
    if declared != RUNNER_ABI:
        raise RunnerLibraryError(
            f"{RUNNER_HEADER_ENV} {header} declares runner.h ABI {declared}; this simpler "
            f"needs ABI {RUNNER_ABI} (simpler/runner/runner.h)"
        )


def simulator_library() -> Path:
    """Where the simulator's compiled library lives once built (keyed by its sources)."""
    return cache_dir() / f"simcard-{_sources_key()}.so"


def _load_simulator(cppyy: Any) -> str:
    library = simulator_library()
    if library.exists():
        cppyy.load_library(str(library))
        return "cached-library"
    if _build(SOURCE_DIR / "simcard.cpp", library):
        cppyy.load_library(str(library))
        return "built-library"
    cppyy.cppdef((SOURCE_DIR / "simcard.cpp").read_text())
    return "jit"


def _sources_key() -> str:
    digest = hashlib.sha256(" ".join(CXX_FLAGS).encode())
    for name in SIM_SOURCES:
        digest.update((SOURCE_DIR / name).read_bytes())
    return digest.hexdigest()[:16]


def _build(source: Path, library: Path, extra_flags: tuple[str, ...] = ()) -> bool:
    """Compile ``source`` into ``library``; False when it cannot be built here."""
    compiler = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if not compiler:
        return False
    try:
        library.parent.mkdir(parents=True, exist_ok=True)
        # Parallel xdist workers start at once: one compiles, the rest wait for it.
        with open(library.parent / ".build.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if library.exists():
                return True
            return _compile([compiler, *CXX_FLAGS, *extra_flags, str(source)], library)
    except OSError:
        return False


def _compile(compile_command: list[str], library: Path) -> bool:
    fd, partial = tempfile.mkstemp(dir=library.parent, suffix=".so.partial")
    os.close(fd)
    command = [*compile_command, "-o", partial]
    try:
        built = subprocess.run(command, capture_output=True, check=False).returncode == 0
        if built:
            os.replace(partial, library)  # atomic: readers see no half-written library
        return built
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)


def is_loaded() -> bool:
    return bool(_loaded)
