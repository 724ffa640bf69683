"""The simulator is compiled once per source hash and reused; without a compiler, cling JITs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = (
    "import numpy as np\n"
    "from simpler.runner import open_runner, library\n"
    "r = open_runner('a5sim', 0); r.init()\n"
    "out = r.run('vector_add', np.ones(3, np.float32), np.ones(3, np.float32))\n"
    "print(library.load().origin, out.tolist())\n"
)


def _load_in_fresh_process(cache: Path, **env: str) -> str:
    child = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "SIMPLER_CACHE_DIR": str(cache), **env},
    )
    return child.stdout.strip()


def test_first_process_builds_the_library_and_the_next_reuses_it(tmp_path: Path) -> None:
    assert _load_in_fresh_process(tmp_path) == "built-library [2.0, 2.0, 2.0]"
    assert _load_in_fresh_process(tmp_path) == "cached-library [2.0, 2.0, 2.0]"
    assert len(list(tmp_path.glob("simcard-*.so"))) == 1
    assert not list(tmp_path.glob("*.partial"))


def test_without_a_compiler_cling_compiles_the_simulator(tmp_path: Path) -> None:
    assert _load_in_fresh_process(tmp_path, CXX="/nonexistent/c++") == "jit [2.0, 2.0, 2.0]"


def test_the_cache_key_follows_the_sources() -> None:
    from simpler.runner import library

    key = library._sources_key()
    assert len(key) == 16 and key == library._sources_key()
