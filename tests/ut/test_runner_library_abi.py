"""A runner library built against another runner.h is refused with one line, never called."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from simpler.runner.library import RUNNER_ABI, RunnerLibraryError, check_user_library

OLD_LIBRARY = """
extern "C" void* simpler_create_runner(const char*, int, int) { return nullptr; }
extern "C" void simpler_destroy_runner(void*) {}
"""
WRONG_ABI = OLD_LIBRARY + 'extern "C" int simpler_runner_abi() { return 1; }\n'
NO_DESTROY = (
    f'extern "C" int simpler_runner_abi() {{ return {RUNNER_ABI}; }}\n'
    'extern "C" void* simpler_create_runner(const char*, const char*, int, int) { return 0; }\n'
)
DESTROY = 'extern "C" void simpler_destroy_runner(void*) {}\n'


def _build(tmp_path: Path, name: str, source: str) -> str:
    compiler = shutil.which("c++") or shutil.which("g++")
    assert compiler, "the project requires a C++ compiler (c++ or g++)"
    (tmp_path / f"{name}.cpp").write_text(source)
    library = tmp_path / f"lib{name}.so"
    command = [compiler, "-shared", "-fPIC", "-o", str(library), str(tmp_path / f"{name}.cpp")]
    subprocess.run(command, check=True)
    return str(library)


@pytest.mark.parametrize(
    ("source", "names"),
    [
        (OLD_LIBRARY, f"does not export simpler_runner_abi\\(\\).*ABI {RUNNER_ABI}"),
        (WRONG_ABI, f"built against runner.h ABI 1; this simpler needs ABI {RUNNER_ABI}"),
        (NO_DESTROY, "does not export simpler_destroy_runner"),
    ],
)
def test_a_mismatched_library_is_refused(tmp_path: Path, source: str, names: str) -> None:
    with pytest.raises(RunnerLibraryError, match=names):
        check_user_library(_build(tmp_path, "runner", source))


def test_a_missing_library_is_named(tmp_path: Path) -> None:
    with pytest.raises(RunnerLibraryError, match="cannot load it"):
        check_user_library(str(tmp_path / "absent.so"))


def test_open_runner_refuses_an_old_library_before_cppyy_binds_it(tmp_path: Path) -> None:
    env = {**os.environ, "SIMPLER_RUNNER_LIBRARY": _build(tmp_path, "old", OLD_LIBRARY)}
    script = "from simpler.runner import open_runner\nopen_runner('myhw', 0)\n"
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert child.returncode == 1
    last = child.stderr.strip().splitlines()[-1]
    assert last.startswith("simpler.runner.library.RunnerLibraryError: SIMPLER_RUNNER_LIBRARY")
    assert "simpler_runner_abi()" in last


def test_python_marshals_exactly_what_runner_h_declares() -> None:
    """The ABI constants live twice, in the header and in the Python that packs launches."""
    from simpler.runner import INVALID_ARGUMENT_RC
    from simpler.runner.directions import IN, INOUT, OUT
    from simpler.runner.tensors import DTYPE_CODES

    header = (Path(__file__).resolve().parents[2] / "simpler" / "runner" / "runner.h").read_text()
    values = {name: int(value) for name, value in re.findall(r"(SIMPLER_\w+) = (\d+)", header)}
    macros = dict(re.findall(r"#define (SIMPLER_\w+) (\d+)", header))
    assert int(macros["SIMPLER_RUNNER_ABI"]) == RUNNER_ABI
    assert int(macros["SIMPLER_RC_INVALID_ARGUMENT"]) == INVALID_ARGUMENT_RC
    assert (values["SIMPLER_IN"], values["SIMPLER_OUT"], values["SIMPLER_INOUT"]) == (
        IN,
        OUT,
        INOUT,
    )
    by_name = {
        "float16": "F16", "bfloat16": "BF16", "float32": "F32", "float64": "F64", "int8": "I8",
        "int16": "I16", "int32": "I32", "int64": "I64", "uint8": "U8", "bool": "BOOL",
    }  # fmt: skip
    assert {values[f"SIMPLER_{c}"]: n for n, c in by_name.items()} == {
        code: name for name, code in DTYPE_CODES.items()
    }


def test_a_header_of_another_version_is_refused(tmp_path: Path) -> None:
    header = tmp_path / "old_runner.h"
    header.write_text("#define SIMPLER_RUNNER_ABI 1\n")
    env = {
        **os.environ,
        "SIMPLER_RUNNER_LIBRARY": _build(tmp_path, "current", NO_DESTROY + DESTROY),
        "SIMPLER_RUNNER_HEADER": str(header),
    }
    script = "from simpler.runner import open_runner\nopen_runner('myhw', 0)\n"
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert child.returncode == 1
    last = child.stderr.strip().splitlines()[-1]
    assert last.endswith(f"this simpler needs ABI {RUNNER_ABI} (simpler/runner/runner.h)")
    assert "SIMPLER_RUNNER_HEADER" in last and "declares runner.h ABI 1" in last
