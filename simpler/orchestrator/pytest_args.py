"""Every pytest command line simpler starts, and what the user's own pytest args ask for.

The phases, the Resource children and the up-front collection all build their argv
here; the CLI and the phases read the user's args (``-n``, ``--sim-fault``, the test
selection) through the readers here, so there is one place that knows pytest's flags.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from simpler.devices import format_devices
from simpler.scheduler.jobs import DEVICES_PLACEHOLDER

__all__ = [
    "PYTEST_NO_TESTS",
    "PYTEST_USAGE_ERROR",
    "PytestCall",
    "collection_argv",
    "option_values",
    "pytest_call",
    "requested_xdist_workers",
    "resource_child_argv",
    "without_selection",
]

# pytest's "no tests collected" and "usage error" exit codes.
PYTEST_NO_TESTS = 5
PYTEST_USAGE_ERROR = 4


@dataclass(frozen=True)
class PytestCall:
    """One pytest process of a phase: its argv and the env it adds."""

    argv: list[str]
    env: dict[str, str]


def _pytest(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", *args]


def _target(platform: str, devices: str, report: str) -> list[str]:
    return ["--platform", platform, "--device", devices, "--report", report]


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
    """A phase's own pytest process (L2 or a retry), in the foreground."""
    argv = _pytest(
        "--simpler-phase",
        phase,
        *_target(platform, format_devices(devices), report),
        *extra,
        *user_args,
    )
    env = {
        "SIMPLER_RUN_ID": run_id,
        "SIMPLER_PHASE": phase,
        "SIMPLER_ATTEMPT": str(attempt),
        "SIMPLER_REPORT": report,
        "SIMPLER_DEVICES": ",".join(map(str, devices)),
        "SIMPLER_PLATFORM": platform,
    }
    return PytestCall(argv, env)


def resource_child_argv(
    nodeid: str, platform: str, report: str, user_args: list[str]
) -> tuple[str, ...]:
    """A Resource child for one test; the scheduler fills in its devices."""
    return tuple(
        _pytest(
            nodeid,
            "--simpler-phase",
            "resource",
            *_target(platform, DEVICES_PLACEHOLDER, report),
            "-p",
            "no:xdist",
            *without_selection(user_args),
        )
    )


def collection_argv(
    platform: str, devices: list[int], listing: str, user_args: list[str]
) -> list[str]:
    """Collect (not run) the suite and have the plugin list each test's device count."""
    return _pytest(
        "--collect-only",
        "-q",
        "-p",
        "no:xdist",
        "--platform",
        platform,
        "--device",
        format_devices(devices),
        "--simpler-list",
        listing,
        *user_args,
    )


def option_values(user_args: list[str], option: str) -> list[str]:
    """Every value given to a long ``option`` as ``--opt V`` or ``--opt=V``, in order."""
    values: list[str] = []
    for i, arg in enumerate(user_args):
        if arg == option and i + 1 < len(user_args):
            values.append(user_args[i + 1])
        elif arg.startswith(option + "="):
            values.append(arg.split("=", 1)[1])
    return values


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
