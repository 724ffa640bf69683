"""The plugin's command-line options, and the settings they resolve to (validated once)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from simpler.contract import SIM_PLATFORMS, TEST_PHASES
from simpler.devices import parse_devices
from simpler.env_settings import positive_int_env
from simpler.reporting.report_file import report_path

__all__ = ["PluginSettings", "add_options", "resolve_settings"]

RETRY_ROLES = ("victim", "trigger")
L2_PARTS = ("pooled", "plain")


@dataclass(frozen=True)
class PluginSettings:
    platform: str
    devices: list[int]
    report: Path | None  # None: write no records (a plain pytest run outside simpler)
    faults: str
    recovery: bool
    phase: str | None  # which tests this process runs; None: all of them
    retry_role: str | None  # in the retry phase: re-running poison-skip victims or a trigger
    attempt: int
    class_lines: bool


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("simpler", "simpler device orchestration")
    group.addoption("--platform", help="device platform (a5sim, a2a3sim); env SIMPLER_PLATFORM")
    group.addoption("--device", help="device ids: 0, 0-7, 0,2,5, 0,2-4,7; env SIMPLER_DEVICES")
    group.addoption("--report", help="report file; env SIMPLER_REPORT")
    group.addoption(
        "--sim-fault", action="append", default=[], help="inject a simulated fault (repeatable)"
    )
    group.addoption("--fail-on-flaky", action="store_true", help="count flaky tests as failures")
    group.addoption(
        "--max-parallel", type=int, help="xdist workers to use (at most one per device)"
    )
    group.addoption(
        "--no-recovery",
        action="store_true",
        help="never reset a poisoned worker (to see the cascade simpler prevents)",
    )
    # Set by `simpler run`: which phase this pytest process serves.
    group.addoption("--simpler-phase", choices=TEST_PHASES, help="(set by simpler run)")
    group.addoption("--simpler-retry-role", choices=RETRY_ROLES, help="(set by simpler run)")
    group.addoption(
        "--simpler-l2-part",
        choices=L2_PARTS,
        help="(set by simpler run) only the L2 tests that use a pooled worker, or only the rest",
    )
    group.addoption(
        "--class-lines", action="store_true", help="one line per test class instead of dots"
    )
    group.addoption(
        "--simpler-list",
        metavar="FILE",
        help="(set by simpler run) write the collected tests and their device counts to FILE",
    )
    group.addoption(
        "--simpler-args",
        metavar="FILE",
        help="(set by simpler run) write what pytest made of each argument to FILE; "
        "collect nothing unless --simpler-list is given",
    )


def resolve_settings(config: pytest.Config) -> PluginSettings:
    """Validate the options; a bad one is a pytest.UsageError naming it."""
    option = config.option
    platform = option.platform or os.environ.get("SIMPLER_PLATFORM") or "a5sim"
    if platform not in SIM_PLATFORMS and not os.environ.get("SIMPLER_RUNNER_LIBRARY"):
        raise pytest.UsageError(
            f"unknown platform {platform!r} (known: {', '.join(SIM_PLATFORMS)}; "
            "set SIMPLER_RUNNER_LIBRARY for a real runner)"
        )
    spec = option.device or os.environ.get("SIMPLER_DEVICES") or "0"
    try:
        devices = parse_devices(spec)
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    explicit_report = option.report or os.environ.get("SIMPLER_REPORT")
    records_wanted = explicit_report or option.simpler_phase
    report = report_path(explicit_report).resolve() if records_wanted else None
    faults = ",".join(
        part for part in [os.environ.get("SIMPLER_SIM_FAULTS", ""), *option.sim_fault] if part
    )
    return PluginSettings(
        platform=platform,
        devices=devices,
        report=report,
        faults=faults,
        recovery=not option.no_recovery,
        phase=option.simpler_phase,
        retry_role=option.simpler_retry_role,
        attempt=_attempt(),
        class_lines=bool(option.class_lines or option.simpler_phase),
    )


def _attempt() -> int:
    try:
        return positive_int_env("SIMPLER_ATTEMPT", 1)
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
