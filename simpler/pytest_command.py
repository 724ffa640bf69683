"""Build the pytest command lines the phases start, and read what the user's own args ask for."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from simpler.devices import format_devices

__all__ = ["PytestCall", "pytest_call", "requested_xdist_workers", "without_selection"]

# pytest's "no tests collected" and "usage error" exit codes.
PYTEST_NO_TESTS = 5
PYTEST_USAGE_ERROR = 4


@dataclass(frozen=True)
class PytestCall:
    """One pytest process of a phase: its argv and the env it adds."""

    argv: list[str]
    env: dict[str, str]


def pytest_call(
    *,
    phase: str,
    platform: str,
    devices: list[int],
    report: str,
    run_id: str,
    attempt: int,
    extra: list[str],
    user_args: list[str],
) -> PytestCall:
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "--simpler-phase",
        phase,
        "--platform",
        platform,
        "--device",
        format_devices(devices),
        "--report",
        report,
        *extra,
        *user_args,
    ]
    env = {
        "SIMPLER_RUN_ID": run_id,
        "SIMPLER_PHASE": phase,
        "SIMPLER_ATTEMPT": str(attempt),
        "SIMPLER_REPORT": report,
        "SIMPLER_DEVICES": ",".join(map(str, devices)),
        "SIMPLER_PLATFORM": platform,
    }
    return PytestCall(argv, env)


def requested_xdist_workers(user_args: list[str]) -> int | None:
    """The ``-n`` the user passed to pytest, when it is a number."""
    for i, arg in enumerate(user_args):
        value: str | None = None
        if arg in ("-n", "--numprocesses") and i + 1 < len(user_args):
            value = user_args[i + 1]
        elif arg.startswith("--numprocesses="):
            value = arg.split("=", 1)[1]
        elif arg.startswith("-n") and len(arg) > 2:
            value = arg[2:]
        if value is not None and value.isdigit():
            return int(value)
    return None


def without_selection(user_args: list[str]) -> list[str]:
    """The user's flags without the paths and node ids they selected tests with.

    A retry names its tests itself; forwarding ``tests/st`` would run everything
    again. An argument counts as a selection when it names an existing path.
    """
    return [a for a in user_args if a.startswith("-") or not os.path.exists(a.split("::")[0])]
