"""Load the C++ runner into cppyy, once per process.

The simulated card is compiled to a shared library cached under a key made
of its sources' hash, so a new process only parses the small headers and
dlopens the library instead of JIT-compiling the whole simulator. Where no
C++ compiler is available, cling compiles the sources in-process instead.

A user with real hardware sets ``SIMPLER_RUNNER_LIBRARY`` (a shared library
implementing runner.h) and, if their header is not runner.h itself,
``SIMPLER_RUNNER_HEADER``. The library must report the runner.h ABI it was
built against; one built against another version is refused with one line.
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simpler.runner.faults import FaultPlan

__all__ = [
    "RUNNER_ABI",
    "NativeLibrary",
    "RunnerLibraryError",
    "cache_dir",
    "check_user_library",
    "is_loaded",
    "load",
]

SOURCE_DIR = Path(__file__).resolve().parent
SIM_SOURCES = ("runner.h", "simcard.h", "simkernels.h", "simcard.cpp")
# runner.h's SIMPLER_RUNNER_ABI: the version this package's Python side marshals for.
RUNNER_ABI = 2
LIBRARY_EXPORTS = ("simpler_runner_abi", "simpler_create_runner", "simpler_destroy_runner")
CXX_FLAGS = ("-std=c++17", "-O2", "-fPIC", "-shared", "-pthread")
# The calls that may wait on the card: cppyy lets other Python threads run meanwhile.
GIL_RELEASING_METHODS = ("init", "run", "drain", "soft_reset", "force_reset", "probe", "finalize")
LAUNCH_FAULT_KINDS = {"hang": 1, "launch_fail": 2}  # simcard.h SIMPLER_SIM_*


@dataclass
class NativeLibrary:
    gbl: Any  # cppyy.gbl, with the runner's declarations loaded
    nullptr: Any
    simulated: bool
    origin: str  # "cached-library", "built-library", "jit" or the user's library path
    tensor_pointer: Any  # address -> const simpler_tensor*
    scalar_pointer: Any  # address -> const simpler_scalar*

    def push_faults(self, plan: FaultPlan) -> None:
        if not self.simulated:
            return
        self.gbl.simpler_sim_clear_faults()
        self.gbl.simpler_sim_set_flags(
            plan.has("force_reset_fail"), plan.has("drain_false_negative"), plan.has("init_fail")
        )
        for fault in plan.launches:
            kind = LAUNCH_FAULT_KINDS[fault.kind]
            self.gbl.simpler_sim_add_launch_fault(kind, fault.selector, fault.attempt or 0)

    def push_test(self, nodeid: str, attempt: int) -> None:
        if self.simulated:
            self.gbl.simpler_sim_set_test(nodeid, attempt)


class RunnerLibraryError(RuntimeError):
    """SIMPLER_RUNNER_LIBRARY names a library simpler cannot drive."""


_lock = threading.Lock()
_loaded: NativeLibrary | None = None


def load() -> NativeLibrary:
    """The process's runner library, loading it on first use."""
    global _loaded
    with _lock:
        if _loaded is None:
            _loaded = _load_uncached()
        return _loaded


def cache_dir() -> Path:
    explicit = os.environ.get("SIMPLER_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "simpler"


def _load_uncached() -> NativeLibrary:
    user_library = os.environ.get("SIMPLER_RUNNER_LIBRARY")
    if user_library:
        check_user_library(user_library)
    import cppyy  # deferred: only device-touching commands pay for cling
    import cppyy.ll

    cppyy.add_include_path(str(SOURCE_DIR))
    if user_library:
        header = os.environ.get("SIMPLER_RUNNER_HEADER") or str(SOURCE_DIR / "runner.h")
        cppyy.include(header)
        _check_header(cppyy, header)
        cppyy.load_library(user_library)
        origin, simulated = user_library, False
    else:
        cppyy.include(str(SOURCE_DIR / "runner.h"))
        cppyy.include(str(SOURCE_DIR / "simcard.h"))
        origin, simulated = _load_simulator(cppyy), True
    runner_class = cppyy.gbl.simpler.DeviceRunner
    for name in GIL_RELEASING_METHODS:
        getattr(runner_class, name).__release_gil__ = True
    return NativeLibrary(
        cppyy.gbl,
        cppyy.nullptr,
        simulated,
        origin,
        cppyy.ll.cast["const simpler_tensor*"],
        cppyy.ll.cast["const simpler_scalar*"],
    )


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
        message = f"SIMPLER_RUNNER_LIBRARY {path}: cannot load it ({error})"
        raise RunnerLibraryError(message) from None
    missing = [name for name in LIBRARY_EXPORTS if not hasattr(handle, name)]
    if "simpler_runner_abi" in missing:
        raise RunnerLibraryError(
            f"SIMPLER_RUNNER_LIBRARY {path} does not export simpler_runner_abi(): it was built "
            f"against an older runner.h; rebuild it against runner.h ABI {RUNNER_ABI}"
        )
    if missing:
        raise RunnerLibraryError(
            f"SIMPLER_RUNNER_LIBRARY {path} does not export {', '.join(missing)} "
            f'(runner.h ABI {RUNNER_ABI} needs {", ".join(LIBRARY_EXPORTS)} as extern "C")'
        )
    abi = handle.simpler_runner_abi
    abi.restype, abi.argtypes = ctypes.c_int, []
    built_against = abi()
    if built_against != RUNNER_ABI:
        raise RunnerLibraryError(
            f"SIMPLER_RUNNER_LIBRARY {path} was built against runner.h ABI {built_against}; "
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
            f"SIMPLER_RUNNER_HEADER {header} declares runner.h ABI {declared}; this simpler "
            f"needs ABI {RUNNER_ABI} (simpler/runner/runner.h)"
        )


def _load_simulator(cppyy: Any) -> str:
    library = cache_dir() / f"simcard-{_sources_key()}.so"
    if library.exists():
        cppyy.load_library(str(library))
        return "cached-library"
    if _build(library):
        cppyy.load_library(str(library))
        return "built-library"
    cppyy.cppdef((SOURCE_DIR / "simcard.cpp").read_text())
    return "jit"


def _sources_key() -> str:
    digest = hashlib.sha256(" ".join(CXX_FLAGS).encode())
    for name in SIM_SOURCES:
        digest.update((SOURCE_DIR / name).read_bytes())
    return digest.hexdigest()[:16]


def _build(library: Path) -> bool:
    """Compile the simulator into ``library``; False when it cannot be built here."""
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
            return _compile(compiler, library)
    except OSError:
        return False


def _compile(compiler: str, library: Path) -> bool:
    fd, partial = tempfile.mkstemp(dir=library.parent, suffix=".so.partial")
    os.close(fd)
    command = [compiler, *CXX_FLAGS, "-o", partial, str(SOURCE_DIR / "simcard.cpp")]
    try:
        built = subprocess.run(command, capture_output=True, check=False).returncode == 0
        if built:
            os.replace(partial, library)  # atomic: readers see no half-written library
        return built
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)


def is_loaded() -> bool:
    return _loaded is not None
