"""Rebuild simpler/runner/cuda/kernels.fatbin from kernels.cu and kernel_math.h
(``nox -s cuda_kernels``).

The fatbin is committed so that no user's machine needs nvcc: it carries machine code for
every architecture CUDA 13 builds (sm_75 to sm_120) and PTX for compute_75, which the
driver compiles for a GPU newer than all of them. kernels.fatbin.sha256 records the hash of
every source it was built from (``sha256sum -c`` reads it), so a test notices a source
edited without a rebuild. Where the same nvcc (NVCC_VERSION) is installed, a test also
rebuilds the fatbin and compares its bytes: nvcc repeats them exactly, given the source by
a relative name (compile_fatbin).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CUDA_DIR = ROOT / "simpler" / "runner" / "cuda"
SOURCE = CUDA_DIR / "kernels.cu"
# Every file the fatbin is built from: kernels.cu and what it includes of ours.
SOURCES = (SOURCE, CUDA_DIR / "kernel_math.h")
FATBIN = CUDA_DIR / "kernels.fatbin"
STAMP = CUDA_DIR / "kernels.fatbin.sha256"
MACHINE_CODE = ("75", "80", "86", "89", "90", "100", "120")
PTX = "75"
# The nvcc that builds the shipped fatbin: another version emits other bytes for the same
# sources. To move to another, change this and rebuild.
NVCC_VERSION = "13.0.88"


def nvcc_command(nvcc: str, output: Path) -> list[str]:
    """The build, to be run in CUDA_DIR (see ``compile_fatbin``)."""
    gencode = [f"-gencode=arch=compute_{sm},code=sm_{sm}" for sm in MACHINE_CODE]
    gencode.append(f"-gencode=arch=compute_{PTX},code=compute_{PTX}")
    # Compressed: about 80 KB instead of 400 KB for the same code.
    return [
        nvcc,
        "-fatbin",
        "-O3",
        *gencode,
        "-Xfatbin",
        "-compress-all",
        "-o",
        str(output.resolve()),
        SOURCE.name,
    ]


def compile_fatbin(nvcc: str, output: Path) -> subprocess.CompletedProcess[str]:
    """nvcc_command run in CUDA_DIR, the source named without a folder: the fatbin embeds
    the path nvcc is given (assert's __FILE__), so an absolute one would make each
    checkout's build differ. So named, nvcc's output repeats byte for byte."""
    command = nvcc_command(nvcc, output)
    return subprocess.run(command, cwd=CUDA_DIR, capture_output=True, text=True, timeout=600)


def nvcc_version(nvcc: str) -> str:
    """``13.0.88`` for nvcc's "Cuda compilation tools, release 13.0, V13.0.88"."""
    said = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout
    found = re.search(r", V(\d+(?:\.\d+)+)", said)
    return found.group(1) if found else said.strip()


def stamp_text() -> str:
    """What kernels.fatbin.sha256 holds for the sources as they are now."""
    return "".join(f"{hashlib.sha256(s.read_bytes()).hexdigest()}  {s.name}\n" for s in SOURCES)


def main() -> int:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        print("build_cuda_kernels: nvcc not found (a CUDA 13 toolkit is needed)", file=sys.stderr)
        return 3
    version = nvcc_version(nvcc)
    if version != NVCC_VERSION:
        print(
            f"build_cuda_kernels: this is nvcc {version}, kernels.fatbin is built by nvcc "
            f"{NVCC_VERSION}: to move to this one, change NVCC_VERSION in {Path(__file__).name}",
            file=sys.stderr,
        )
        return 3
    built = compile_fatbin(nvcc, FATBIN)
    print(built.stdout + built.stderr, end="", file=sys.stderr)
    if built.returncode != 0:
        return built.returncode
    STAMP.write_text(stamp_text())
    names = ", ".join(s.name for s in SOURCES)
    print(f"{FATBIN.relative_to(ROOT)}: {FATBIN.stat().st_size} bytes from {names}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
