"""The commands the README shows, as typed: of the two set-up commands, CI runs the test one,
and the scene-suite one sets up with an externally managed (PEP 668) system Python such as
Debian's or Ubuntu's; the five commands a user types most are each accepted by simpler's
own parser, and the paths they name exist."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from simpler.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = Path("/usr/bin/python3")


def _bash_block(heading: str) -> list[str]:
    """The commands of the ```bash block under the README's ``## heading``."""
    readme = (ROOT / "README.md").read_text()
    assert f"## {heading}\n" in readme, f"README has no '## {heading}' section"
    section = readme.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block, f"README's '{heading}' has no ```bash block"
    lines = [line.strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def _readme_commands() -> dict[str, str]:
    """The commands of the "Set up and run" section's code block, by the session they run."""
    commands = _bash_block("Set up and run")
    by_session = {}
    for command in commands:
        session = re.search(r"nox -s (\S+)$", command)
        assert session, f"a README set-up command that runs no nox session: {command}"
        by_session[session.group(1)] = command
    assert set(by_session) == {"st_a5", "tests"}, by_session
    return by_session


def test_ci_runs_exactly_the_readme_test_command() -> None:
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert _readme_commands()["tests"] in ci_lines


FIVE_COMMANDS = "The five commands you will type most"


def _accepts(argv: list[str]) -> None:
    """simpler's own parser for the command takes ``argv`` (``simpler`` left off): what a
    typo in an option or a command the README shows would make it refuse."""
    own = argv[: argv.index("--")] if "--" in argv else argv
    build_parser().parse_args(own)


def test_the_five_commands_shown_are_simplers_own(capsys: pytest.CaptureFixture[str]) -> None:
    commands = _bash_block(FIVE_COMMANDS)
    assert len(commands) == 5 and all(c.startswith("simpler ") for c in commands), commands
    for command in commands:
        argv = shlex.split(command)[1:]
        try:
            _accepts(argv)
        except SystemExit as exited:  # --version prints and exits 0
            assert exited.code in (0, None), f"README: `{command}` exits {exited.code}"
        pytest_args = argv[argv.index("--") + 1 :] if "--" in argv else []
        paths = [arg for arg in pytest_args if not arg.startswith("-") and "/" in arg]
        assert all((ROOT / path).exists() for path in paths), f"README: `{command}`"
    capsys.readouterr()


def _externally_managed_system_python() -> str | None:
    """Why the PEP 668 set-up cannot be tried here, or None when it can."""
    if not SYSTEM_PYTHON.exists():
        return f"{SYSTEM_PYTHON} does not exist (not a Debian or Ubuntu system Python)"
    stdlib = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import sysconfig; print(sysconfig.get_path('stdlib'))"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    if not stdlib or not (Path(stdlib) / "EXTERNALLY-MANAGED").exists():
        return f"{SYSTEM_PYTHON} is not externally managed (no {stdlib}/EXTERNALLY-MANAGED)"
    venv = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import ensurepip, venv"], capture_output=True, text=True
    )
    if venv.returncode != 0:
        return f"{SYSTEM_PYTHON} has no venv/ensurepip (Debian: the python3-venv package)"
    return None


def _set_up_part(command: str) -> tuple[str, str]:
    """The command up to its last step, and that step with ``-l`` for ``-s SESSION``: the
    set-up runs for real, and nox only lists the sessions instead of building cppyy."""
    steps = command.split(" && ")
    argv = shlex.split(steps[-1])
    assert argv[-2] == "-s", steps[-1]
    return " && ".join(steps[:-1]), shlex.join([*argv[:-2], "-l"])


@pytest.mark.timeout(600)
def test_the_scene_suite_command_sets_up_with_an_externally_managed_system_python(
    tmp_path: Path,
) -> None:
    reason = _externally_managed_system_python()
    if reason:
        pytest.skip(reason)
    set_up, run_nox = _set_up_part(_readme_commands()["st_a5"])
    # A checkout of its own (no .venv, no .nox of this one's), the system python3 first on
    # PATH, and nothing of the environment this test runs in that would let pip through.
    checkout = tmp_path / "simpler"
    shutil.copytree(
        ROOT,
        checkout,
        ignore=shutil.ignore_patterns(
            ".git",
            ".venv",
            ".nox",
            ".simpler",
            ".*_cache",
            ".hypothesis",
            "__pycache__",
            "*.egg-info",
        ),
    )
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PIP_BREAK_SYSTEM_PACKAGES")
        and not key.startswith("NOX_")
    }
    env["PATH"] = os.pathsep.join(
        [str(SYSTEM_PYTHON.parent), "/bin", *os.environ.get("PATH", "").split(os.pathsep)]
    )
    assert shutil.which("python3", path=env["PATH"]) == str(SYSTEM_PYTHON)

    for attempt in ("first", "second"):  # the second run must reuse what the first made
        done = subprocess.run(
            ["bash", "-c", set_up], cwd=checkout, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, (
            f"README's set-up `{set_up}` failed ({attempt} run) with {SYSTEM_PYTHON} "
            f"(externally managed):\n{done.stdout}\n{done.stderr}"
        )
    listed = subprocess.run(
        ["bash", "-c", run_nox], cwd=checkout, env=env, capture_output=True, text=True
    )
    assert listed.returncode == 0, f"`{run_nox}` failed:\n{listed.stdout}\n{listed.stderr}"
    assert re.search(r"^[*-] st_a5\b", listed.stdout, re.MULTILINE), listed.stdout
