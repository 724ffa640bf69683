"""``simpler --version`` and ``python -m simpler --version``, typed as a user types them:
one line each for simpler, Python, pytest, coverage.py, cppyy and the simulator library."""

from __future__ import annotations

import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The console script pip installed beside this interpreter (the project's environment).
CONSOLE_SCRIPT = Path(sys.executable).parent / "simpler"


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param([str(CONSOLE_SCRIPT), "--version"], id="simpler"),
        pytest.param([sys.executable, "-m", "simpler", "--version"], id="python -m simpler"),
    ],
)
def test_version_names_what_a_bug_report_needs(argv: list[str], tmp_path: Path) -> None:
    if not Path(argv[0]).exists():
        pytest.skip(f"no console script {argv[0]} (simpler not pip-installed beside Python)")
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout.splitlines()[:5] == [
        f"simpler {metadata.version('simpler')}",
        f"Python {platform.python_version()} ({platform.python_implementation()})",
        f"pytest {metadata.version('pytest')}",
        f"coverage.py {metadata.version('coverage')}",
        f"cppyy {metadata.version('cppyy')}",
    ]
    last = done.stdout.splitlines()[5:]
    assert len(last) == 1 and last[0].startswith("simulator library: "), done.stdout
