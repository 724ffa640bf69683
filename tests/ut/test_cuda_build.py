"""Platform cuda on a machine without a GPU: its C++ builds against cuda.h, its shipped
kernels are what their sources build, and without a driver every entry point says so in
one line."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import build_cuda_kernels  # scripts/, on pytest's pythonpath
import pytest

from simpler.runner import cuda_driver, library
from simpler.runner.faults import parse_faults

ROOT = Path(__file__).resolve().parents[2]
CUDA_DIR = ROOT / "simpler" / "runner" / "cuda"
NO_DRIVER = {"SIMPLER_CUDA_DRIVER": "/nonexistent/libcuda.so.1"}


def _compiler() -> str | None:
    return shutil.which("c++") or shutil.which("g++")


@pytest.fixture(scope="module")
def runner_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    header_dir = cuda_driver.cuda_header_dir()
    if header_dir is None or _compiler() is None:
        pytest.skip("no cuda.h (a CUDA toolkit or the nvidia-cuda-runtime wheel) or no compiler")
    built = tmp_path_factory.mktemp("cudacard") / "cudacard.so"
    flags = ("-I", str(CUDA_DIR.parent), "-I", str(header_dir))
    assert library._build(CUDA_DIR / "cudacard.cpp", built, flags), (
        "the CUDA runner did not compile"
    )
    return built


def _symbols(path: Path, *nm_flags: str) -> set[str]:
    listing = subprocess.run(["nm", "-D", *nm_flags, str(path)], capture_output=True, text=True)
    return {line.split()[-1] for line in listing.stdout.splitlines() if line.strip()}


def test_the_runner_calls_the_driver_by_its_versioned_symbols(runner_library: Path) -> None:
    undefined = _symbols(runner_library, "--undefined-only")
    # cuda.h's macros, applied because the driver is called from C++: the _v2 entry points.
    for versioned in ("cuMemAlloc_v2", "cuMemGetInfo_v2", "cuDevicePrimaryCtxReset_v2"):
        assert versioned in undefined
    assert "cuMemAlloc" not in undefined and "cuDevicePrimaryCtxReset" not in undefined
    assert {"cuStreamQuery", "cuLaunchKernel", "cuDevicePrimaryCtxRetain"} <= undefined
    assert not any(name.startswith("cuCtxCreate") for name in undefined), "primary context only"


def test_the_runner_exports_a_factory_of_its_own(runner_library: Path) -> None:
    exported = _symbols(runner_library, "--defined-only")
    assert {"simpler_cuda_create_runner", "simpler_cuda_destroy_runner"} <= exported
    # Not runner.h's own names: the simulated card's library exports those in the same process.
    assert "simpler_create_runner" not in exported


def test_cppyy_parses_the_runner_headers() -> None:
    code = (
        "import cppyy\n"
        f"cppyy.add_include_path({str(CUDA_DIR.parent)!r})\n"
        "cppyy.include('runner.h'); cppyy.include('cuda/cudacard.h')\n"
        "print(cppyy.gbl.simpler_cuda_create_runner, int(cppyy.macro('SIMPLER_CUDA_HANG')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "5"


def test_the_stamp_names_every_source_of_the_shipped_kernels() -> None:
    stamp = build_cuda_kernels.STAMP.read_text()
    assert stamp == build_cuda_kernels.stamp_text(), (
        "kernels.cu or kernel_math.h changed since kernels.fatbin was built: "
        "run `nox -s cuda_kernels`"
    )
    assert build_cuda_kernels.FATBIN.stat().st_size > 0


def test_every_header_the_kernels_include_is_a_stamped_source() -> None:
    # A header of ours missing from SOURCES could change the fatbin unnoticed by the stamp.
    stamped = {s.name for s in build_cuda_kernels.SOURCES}
    for source in build_cuda_kernels.SOURCES:
        included = set(re.findall(r'^#include "([^"]+)"', source.read_text(), re.MULTILINE))
        assert included <= stamped, f"{source.name} includes {included - stamped}"


def test_the_shipped_kernels_are_what_nvcc_builds_from_the_sources(tmp_path: Path) -> None:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not found: kernels.fatbin is not rebuilt to compare its bytes")
    version, pinned = build_cuda_kernels.nvcc_version(nvcc), build_cuda_kernels.NVCC_VERSION
    if version != pinned:
        pytest.skip(f"nvcc {version} here, kernels.fatbin is built by {pinned}: other bytes")
    rebuilt = tmp_path / "kernels.fatbin"
    done = build_cuda_kernels.compile_fatbin(nvcc, rebuilt)
    assert done.returncode == 0, done.stderr[-3000:]
    # The same nvcc repeats its output byte for byte (the source named relative to its
    # folder, no path of this checkout in it): a difference is a source or a flag.
    assert rebuilt.read_bytes() == build_cuda_kernels.FATBIN.read_bytes(), (
        "kernels.fatbin is not what its sources build: run `nox -s cuda_kernels`"
    )


def test_without_a_driver_opening_a_cuda_runner_is_one_line() -> None:
    code = (
        "from simpler.runner import open_runner\n"
        "try:\n    open_runner('cuda', 0)\nexcept Exception as e:\n"
        "    print(type(e).__name__); print(e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**_env(), **NO_DRIVER},
    )
    name, line, *rest = done.stdout.splitlines()
    assert name == "CudaUnavailable" and not rest
    assert "needs the NVIDIA driver: /nonexistent/libcuda.so.1 cannot be loaded" in line


def test_each_platform_refuses_the_faults_it_cannot_inject(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SIMPLER_RUNNER_LIBRARY", raising=False)
    plan = parse_faults("illegal_address@a,trap@b,hang@c,stuck@d,force_reset_fail")
    assert plan.unsupported_on("cuda") == ["force_reset_fail", "stuck"]
    assert plan.unsupported_on("a5sim") == ["illegal_address", "trap"]
    assert plan.unsupported_on("their_npu") == []  # a project's own runtime: its own faults
    monkeypatch.setenv("SIMPLER_RUNNER_LIBRARY", "/x/libtheirs.so")
    assert plan.unsupported_on("cuda") == []  # a user's library runs every platform


def test_the_library_kind_follows_the_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SIMPLER_RUNNER_LIBRARY", raising=False)
    assert (library.kind_for("cuda"), library.kind_for("a5sim")) == ("cuda", "sim")
    monkeypatch.setenv("SIMPLER_RUNNER_LIBRARY", "/x/libtheirs.so")
    assert library.kind_for("cuda") == "user"  # a user's library runs every platform


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)
