"""Builds the fake CUDA driver (fake_cuda.cpp) that tests load in place of libcuda.so.1.

The build needs a C++17 compiler and the CUDA toolkit's cuda.h (the fake defines the
driver API under the header's own declarations); it needs no GPU and no driver. The fake's
work kernels are simpler/runner/cuda/kernels.cu's own, built for the host
(tests/host_kernels/cuda_on_host.h).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

# The cuda.h the runner itself is compiled against: the fake must match its declarations.
from simpler.runner.cuda_driver import CUDA_DIR, cuda_header_dir

SOURCE = Path(__file__).with_name("fake_cuda.cpp")
HOST_DIR = Path(__file__).resolve().parents[1] / "host_kernels"
# What SOURCE includes of ours: part of the build's key.
INCLUDED = (HOST_DIR / "cuda_on_host.h", CUDA_DIR / "kernels.cu", CUDA_DIR / "kernel_math.h")
# Hidden by default: the library exports the driver API (FAKE_API) and nothing of kernels.cu.
FLAGS = (
    "-std=c++17",
    "-O1",
    "-fPIC",
    "-shared",
    "-pthread",
    "-fvisibility=hidden",
    "-Wl,-soname,libcuda.so.1",
)


class FakeDriverUnavailable(RuntimeError):
    """This machine lacks what the build needs (a C++ compiler or cuda.h)."""


def compiler() -> str | None:
    """$CXX when set, else c++ from PATH."""
    return shutil.which(os.environ.get("CXX") or "c++")


def build_fake_driver(out_dir: Path) -> Path:
    """``out_dir/<hash>/libcuda.so.1``, compiled unless that source and toolchain built it.

    Point SIMPLER_CUDA_DRIVER at the result (or put its folder on LD_LIBRARY_PATH).
    Raises FakeDriverUnavailable when no compiler or no cuda.h is found, and
    subprocess.CalledProcessError (with the compiler's output) when the compile fails.
    """
    cxx, include = compiler(), cuda_header_dir()
    if cxx is None:
        raise FakeDriverUnavailable("no C++ compiler (c++ or $CXX) on PATH")
    if include is None:
        raise FakeDriverUnavailable("no cuda.h (a CUDA toolkit, or the nvidia-cuda-runtime wheel)")
    key = hashlib.sha256()
    for part in (SOURCE, *INCLUDED, include / "cuda.h"):
        key.update(part.read_bytes())
    key.update(" ".join((cxx, *FLAGS, str(include), str(CUDA_DIR), str(HOST_DIR))).encode())
    target = Path(out_dir) / key.hexdigest()[:16] / "libcuda.so.1"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # Built beside the target and renamed into place, so that concurrent builders
    # (xdist workers) never load a half-written library.
    partial = target.with_name(f"libcuda.so.1.{os.getpid()}.partial")
    includes = [f"-I{include}", f"-I{CUDA_DIR}", f"-I{HOST_DIR}"]
    command = [cxx, *FLAGS, *includes, "-o", str(partial), str(SOURCE)]
    subprocess.run(command, check=True, capture_output=True, text=True)
    os.replace(partial, target)
    return target
