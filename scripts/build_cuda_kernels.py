"""Rebuild simpler/runner/cuda/kernels.fatbin from kernels.cu (``nox -s cuda_kernels``).

The fatbin is committed so that no user's machine needs nvcc: it carries machine code for
every architecture CUDA 13 builds (sm_75 to sm_120) and PTX for compute_75, which the
driver compiles for a GPU newer than all of them. nvcc's output is byte-for-byte
repeatable, and kernels.fatbin.sha256 records the source it was built from, so a test
notices a kernels.cu edited without a rebuild.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

CUDA_DIR = Path(__file__).resolve().parents[1] / "simpler" / "runner" / "cuda"
SOURCE = CUDA_DIR / "kernels.cu"
FATBIN = CUDA_DIR / "kernels.fatbin"
STAMP = CUDA_DIR / "kernels.fatbin.sha256"
MACHINE_CODE = ("75", "80", "86", "89", "90", "100", "120")
PTX = "75"


def nvcc_command(nvcc: str, output: Path) -> list[str]:
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
        str(output),
        str(SOURCE),
    ]


def source_digest() -> str:
    return hashlib.sha256(SOURCE.read_bytes()).hexdigest()


def main() -> int:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        print("build_cuda_kernels: nvcc not found (a CUDA 13 toolkit is needed)", file=sys.stderr)
        return 3
    subprocess.run(nvcc_command(nvcc, FATBIN), check=True)
    STAMP.write_text(f"{source_digest()}  kernels.cu\n")
    print(f"{FATBIN.relative_to(Path.cwd())}: {FATBIN.stat().st_size} bytes from {SOURCE.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
