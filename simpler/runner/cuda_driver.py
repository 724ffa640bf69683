"""The NVIDIA driver for platform ``cuda``: finding it, building the runner against it, asking it.

``libcuda.so.1`` is loaded first and globally (the runner leaves the ``cu*`` symbols to it);
without it, ``driver_problem()`` is one line. The runner is compiled once per source hash
into simpler's cache against a toolkit's or the ``nvidia-cuda-runtime`` wheel's ``cuda.h``;
its kernels ship prebuilt (docs/gpu.md). ``SIMPLER_CUDA_DRIVER`` names another driver.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import os
import shutil
import threading
from pathlib import Path
from typing import Any

from simpler.contract.settings import CUDA_DRIVER_ENV

__all__ = [
    "CUDA_SOURCES",
    "KERNEL_MODULE",
    "CudaUnavailable",
    "cuda_header_dir",
    "driver_problem",
    "load_runner",
    "require_driver",
    "runner_sources_key",
]

DEFAULT_DRIVER = "libcuda.so.1"
SOURCE_DIR = Path(__file__).resolve().parent
CUDA_DIR = SOURCE_DIR / "cuda"
CUDA_SOURCES = (
    "runner.h",
    "launch_faults.h",
    "cuda/cudacard.h",
    "cuda/cudaplan.h",
    "cuda/cudacard.cpp",
)
KERNEL_MODULE = CUDA_DIR / "kernels.fatbin"
# Where a CUDA toolkit or NVIDIA's wheels keep cuda.h, after $CUDA_HOME and $CUDA_PATH.
WHEEL_INCLUDE_DIRS = ("cu13/include", "cuda_runtime/include", "cu12/include")
TOOLKIT_INCLUDE_DIRS = ("/usr/local/cuda/include", "/opt/cuda/include", "/usr/include")


class CudaUnavailable(RuntimeError):
    """Platform ``cuda`` cannot run here: no driver, or no cuda.h to build the runner with."""


_lock = threading.Lock()
_drivers: dict[str, ctypes.CDLL] = {}  # by path: a process loads each driver once


def driver_path() -> str:
    return os.environ.get(CUDA_DRIVER_ENV) or DEFAULT_DRIVER


def driver_problem() -> str | None:
    """None when the driver loads; else one line that names what is missing."""
    try:
        require_driver()
    except CudaUnavailable as error:
        return str(error)
    return None


def require_driver() -> ctypes.CDLL:
    """The driver, loaded once per path; ``CudaUnavailable`` (one line) when it cannot be."""
    path = driver_path()
    with _lock:
        if path not in _drivers:
            try:
                # Global, so the runner library's cu* symbols resolve against it.
                _drivers[path] = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            except OSError as error:
                raise CudaUnavailable(
                    f"platform cuda needs the NVIDIA driver: {path} cannot be loaded "
                    f"({_first_line(error)}); install the NVIDIA driver, or run on a "
                    "machine with an NVIDIA GPU"
                ) from None
        return _drivers[path]


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def cuda_header_dir() -> Path | None:
    """The folder holding the cuda.h the runner is compiled against, or None."""
    candidates = [
        Path(os.environ[name]) / "include"
        for name in ("CUDA_HOME", "CUDA_PATH")
        if os.environ.get(name)
    ]
    spec = importlib.util.find_spec("nvidia")
    for root in spec.submodule_search_locations or [] if spec else []:
        candidates += [Path(root) / sub for sub in WHEEL_INCLUDE_DIRS]
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(Path(nvcc).resolve().parent.parent / "include")
    candidates += [Path(p) for p in TOOLKIT_INCLUDE_DIRS]
    return next((c for c in candidates if (c / "cuda.h").is_file()), None)


def runner_sources_key(header_dir: Path, flags: tuple[str, ...]) -> str:
    digest = hashlib.sha256(" ".join(flags).encode())
    for name in CUDA_SOURCES:
        digest.update((SOURCE_DIR / name).read_bytes())
    digest.update((header_dir / "cuda.h").read_bytes())  # another toolkit, another build
    return digest.hexdigest()[:16]


def load_runner(cppyy: Any, build: Any, cache: Path, cxx_flags: tuple[str, ...]) -> str:
    """Load the CUDA runner into cppyy (driver first); returns how it was obtained.

    ``build(source, library, extra_flags)`` compiles into ``library`` (False: no compiler);
    the library is cached in ``cache`` under a key of its sources, cuda.h and the flags.
    """
    require_driver()
    header_dir = cuda_header_dir()
    if header_dir is None:
        raise CudaUnavailable(
            "platform cuda needs cuda.h to build its runner: install a CUDA toolkit, set "
            "CUDA_HOME, or pip install 'simpler[cuda]' (NVIDIA's nvidia-cuda-runtime wheel)"
        )
    cppyy.include(str(CUDA_DIR / "cudacard.h"))
    flags = ("-I", str(SOURCE_DIR), "-I", str(header_dir))
    key = runner_sources_key(header_dir, cxx_flags + flags)
    library = cache / f"cudacard-{key}.so"
    if library.exists():
        origin = "cached-library"
    elif build(CUDA_DIR / "cudacard.cpp", library, flags):
        origin = "built-library"
    else:
        cppyy.add_include_path(str(header_dir))
        cppyy.cppdef((CUDA_DIR / "cudacard.cpp").read_text())
        origin = "jit"
    if origin != "jit":
        cppyy.load_library(str(library))
    cppyy.gbl.simpler_cuda_set_module_path(str(KERNEL_MODULE))
    return origin
