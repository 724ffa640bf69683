"""Builds the fake CUDA driver (fake_cuda.cpp) that tests load in place of libcuda.so.1.

The build needs a C++17 compiler and the CUDA toolkit's cuda.h (the fake defines the
driver API under the header's own declarations); it needs no GPU and no driver.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

# The cuda.h the runner itself is compiled against: the fake must match its declarations.
from simpler.runner.cuda_driver import cuda_header_dir

SOURCE = Path(__file__).with_name("fake_cuda.cpp")
FLAGS = ("-std=c++17", "-O1", "-fPIC", "-shared", "-pthread", "-Wl,-soname,libcuda.so.1")


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
    for part in (SOURCE.read_bytes(), (include / "cuda.h").read_bytes()):
        key.update(part)
    key.update(" ".join((cxx, *FLAGS, str(include))).encode())
    target = Path(out_dir) / key.hexdigest()[:16] / "libcuda.so.1"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # Built beside the target and renamed into place, so that concurrent builders
    # (xdist workers) never load a half-written library.
    partial = target.with_name(f"libcuda.so.1.{os.getpid()}.partial")
    command = [cxx, *FLAGS, f"-I{include}", "-o", str(partial), str(SOURCE)]
    subprocess.run(command, check=True, capture_output=True, text=True)
    os.replace(partial, target)
    return target
