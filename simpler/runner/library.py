"""Load the C++ runner into cppyy, once per process.

The simulated card is compiled to a shared library cached under a key made
of its sources' hash, so a new process only parses the small headers and
dlopens the library instead of JIT-compiling the whole simulator. Where no
C++ compiler is available, cling compiles the sources in-process instead.

A user with real hardware sets ``SIMPLER_RUNNER_LIBRARY`` (a shared library
implementing runner.h) and, if their header is not runner.h itself,
``SIMPLER_RUNNER_HEADER``.
"""

from __future__ import annotations

import contextlib
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

__all__ = ["NativeLibrary", "cache_dir", "is_loaded", "load"]

SOURCE_DIR = Path(__file__).resolve().parent
SIM_SOURCES = ("runner.h", "simcard.h", "simcard.cpp")
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
    import cppyy  # deferred: only device-touching commands pay for cling

    user_library = os.environ.get("SIMPLER_RUNNER_LIBRARY")
    cppyy.add_include_path(str(SOURCE_DIR))
    if user_library:
        cppyy.include(os.environ.get("SIMPLER_RUNNER_HEADER") or str(SOURCE_DIR / "runner.h"))
        cppyy.load_library(user_library)
        origin, simulated = user_library, False
    else:
        cppyy.include(str(SOURCE_DIR / "runner.h"))
        cppyy.include(str(SOURCE_DIR / "simcard.h"))
        origin, simulated = _load_simulator(cppyy), True
    runner_class = cppyy.gbl.simpler.DeviceRunner
    for name in GIL_RELEASING_METHODS:
        getattr(runner_class, name).__release_gil__ = True
    return NativeLibrary(cppyy.gbl, cppyy.nullptr, simulated, origin)


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
