"""What ``simpler run`` refuses up front, once, instead of in every pytest process it starts.

Each check raises ``UsageError`` (one line, exit 2), or ``OSError`` for a runner library that
cannot be driven (exit 3). Nothing here loads cppyy: a runner library is only opened by
ctypes, and the NVIDIA driver is only looked for.
"""

from __future__ import annotations

import os

from simpler.contract import BUILTIN_PLATFORMS, SIM_PLATFORMS
from simpler.contract.child import ATTEMPT_ENV
from simpler.contract.settings import (
    CUDA_SPIN_MS_ENV,
    OP_TIMEOUT_MS_ENV,
    RESET_ATTEMPTS_ENV,
    RUNNER_LIBRARY_ENV,
    SIM_FAULTS_ENV,
    positive_int_env,
)
from simpler.usage import UsageError

__all__ = ["check_env_numbers", "check_faults", "check_platform", "check_runner_library"]

# The positive integers the pytest processes read from the environment.
ENV_NUMBERS = (OP_TIMEOUT_MS_ENV, RESET_ATTEMPTS_ENV, ATTEMPT_ENV, CUDA_SPIN_MS_ENV)


def check_faults(platform: str, pytest_args: list[str]) -> None:
    """A malformed fault spec, or one the platform cannot inject, would fail in every pytest
    process: refuse it once, up front."""
    from simpler.orchestrator.pytest_args import option_values
    from simpler.runner.faults import parse_faults

    specs = [(SIM_FAULTS_ENV, os.environ.get(SIM_FAULTS_ENV))]
    faults = option_values(pytest_args, "--simpler-sim-fault")
    specs += [("--simpler-sim-fault", value) for value in faults]
    for source, spec in specs:
        try:
            plan = parse_faults(spec, source)
        except ValueError as error:
            raise UsageError(f"simpler run: {error}") from None
        unsupported = plan.unsupported_on(platform)
        if unsupported:
            raise UsageError(
                f"simpler run: {source}: platform {platform!r} cannot inject "
                f"{', '.join(unsupported)} (see simpler/runner/faults.py for each platform's)"
            )


def check_env_numbers() -> None:
    """Numbers every pytest process would read: a bad one is refused once, before anything."""
    for name in ENV_NUMBERS:
        try:
            positive_int_env(name, 1)
        except ValueError as error:
            raise UsageError(f"simpler run: {error}") from None


def check_platform(platform: str, runner_hook: bool) -> None:
    """A platform is built in, or a runner is provided for it: a hook or a runner library."""
    user_library = os.environ.get(RUNNER_LIBRARY_ENV)
    if user_library and platform not in SIM_PLATFORMS and not runner_hook:
        check_runner_library(user_library)
    if runner_hook or user_library or platform in SIM_PLATFORMS:
        return
    if platform == "cuda":
        from simpler.runner.cuda_driver import driver_problem

        problem = driver_problem()
        if problem is not None:
            raise UsageError(f"simpler run: {problem}")
        return
    raise UsageError(
        f"simpler run: unknown platform {platform!r}: no runner is provided for it (built in: "
        f"{', '.join(BUILTIN_PLATFORMS)}; implement the pytest_simpler_create_runner hook in a "
        f"conftest.py, or set {RUNNER_LIBRARY_ENV} to a library implementing "
        "simpler/runner/runner.h)"
    )


def check_runner_library(path: str) -> None:
    """A library built against another runner.h: one line and exit 3 before any phase, not a
    refusal inside every test (loading it binds nothing: only its exports are read)."""
    from simpler.runner.library import RunnerLibraryError, check_user_library

    try:
        check_user_library(path)
    except RunnerLibraryError as error:
        raise OSError(f"simpler run: {error}") from None
