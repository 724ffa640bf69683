"""``simpler --version``: the versions a bug report needs, one line each, read without
importing the dependencies or building the simulator."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from simpler.cli import main
from simpler.runner import library, versions


def test_one_line_each_for_simpler_python_pytest_coverage_cppyy_and_the_library() -> None:
    lines = versions.version_lines()
    names = [line.split(" ", 1)[0] for line in lines]
    assert names == ["simpler", "Python", "pytest", "coverage.py", "cppyy", "simulator"]
    assert lines[0] == f"simpler {metadata.version('simpler')}"
    assert lines[2] == f"pytest {pytest.__version__}"
    assert lines[4] == f"cppyy {metadata.version('cppyy')}"


def test_a_missing_dependency_is_said_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(versions.DEPENDENCIES, "absent", "simpler-no-such-distribution")
    assert "absent not installed" in versions.version_lines()


def test_the_library_is_built_once_its_cached_file_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIMPLER_CACHE_DIR", str(tmp_path))
    built = library.simulator_library()
    assert built.parent == tmp_path
    assert versions.version_lines()[-1].startswith("simulator library: not built yet")
    built.write_bytes(b"")
    assert versions.version_lines()[-1] == f"simulator library: built ({built})"


def test_the_flag_prints_the_lines_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code in (0, None)
    assert capsys.readouterr().out.splitlines() == versions.version_lines()


def test_answering_imports_neither_cppyy_nor_pytest(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from simpler.cli import main\n"
        "try:\n"
        "    main(['--version'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(name for name in ('cppyy', 'pytest') if name in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert done.stdout.splitlines()[-1] == "[]", done.stdout
