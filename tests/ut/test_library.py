"""The simulator is compiled once per source hash and reused; without a compiler, cling JITs it."""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from simpler.runner import library

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


def _simulator_sources() -> list[str]:
    """What compiling simcard.cpp reads: it and every local header it includes, transitively."""
    found, pending = [], ["simcard.cpp"]
    while pending:
        name = pending.pop()
        if name not in found:
            found.append(name)
            text = (library.SOURCE_DIR / name).read_text()
            folder = posixpath.dirname(name)  # a quoted include starts from its file's folder
            included = re.findall(r'^#include "([^"]+)"', text, flags=re.MULTILINE)
            pending += [posixpath.normpath(posixpath.join(folder, path)) for path in included]
    return sorted(found)


@pytest.mark.parametrize("changed", _simulator_sources())
def test_the_cache_key_follows_every_source_of_the_library(
    changed: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in _simulator_sources():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(library.SOURCE_DIR / name, tmp_path / name)
    monkeypatch.setattr(library, "SOURCE_DIR", tmp_path)
    unchanged = library._sources_key()
    assert unchanged == library._sources_key()  # the same sources, the same library

    with (tmp_path / changed).open("a") as source:
        source.write("// edited\n")
    assert library._sources_key() != unchanged, f"an edit of {changed} would reuse a stale library"


def test_the_cache_key_follows_the_compiler_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    unchanged = library._sources_key()
    monkeypatch.setattr(library, "CXX_FLAGS", (*library.CXX_FLAGS, "-DSIMPLER_OTHER_BUILD"))
    assert library._sources_key() != unchanged
