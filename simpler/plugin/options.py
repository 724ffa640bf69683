"""The plugin's command-line options and ini keys, when it is active, and the settings they
resolve to (validated once).

Every option is ``--simpler-...``: the plugin loads into every pytest run of an environment
where simpler is installed, and must never take a name a project's own conftest uses
(``--platform``, ``--device``, ``--report``, ...). It is active only when asked for
(:func:`plugin_active`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from simpler.contract import BUILTIN_PLATFORMS, NO_DEVICE_SPEC
from simpler.contract.child import ChildContract, started_by_run
from simpler.contract.settings import (
    DEVICES_ENV,
    PLATFORM_ENV,
    REPORT_ENV,
    RUNNER_LIBRARY_ENV,
    SIM_FAULTS_ENV,
)
from simpler.devices import parse_devices
from simpler.plugin.project_runtime import has_runner_hook
from simpler.reporting.report_file import report_path

__all__ = [
    "PROJECT_OPTION_INIS",
    "PluginSettings",
    "add_options",
    "no_runner_message",
    "one_runtime_per_device",
    "plugin_active",
    "resolve_settings",
    "told_by_run",
    "worker_fixture_name",
]

RETRY_ROLES = ("victim", "trigger")
# Every option's dest: any of them given (not its default) activates the plugin.
OPTION_DESTS = (
    "simpler_platform",
    "simpler_device",
    "simpler_report",
    "simpler_sim_fault",
    "simpler_fail_on_flaky",
    "simpler_max_parallel",
    "simpler_no_recovery",
    "simpler_class_lines",
    "simpler_one_runtime_per_device",
    "simpler_retry_role",
    "simpler_no_device_tests",
    "simpler_devices_freed",
    "simpler_only_tests",
    "simpler_list",
    "simpler_args",
)
# The ini keys a project may set instead of the user-facing options; any of them set activates.
INI_TEXTS = {
    "simpler_platform": "device platform (as --simpler-platform)",
    "simpler_device": "device ids (as --simpler-device)",
    "simpler_report": "report file, relative to the ini file (as --simpler-report)",
}
INI_FLAGS = {"simpler_class_lines": "one line per test class (as --simpler-class-lines)"}
INI_KEYS = (*INI_TEXTS, *INI_FLAGS)
# A project setting of the worker pool: it shapes the `worker` fixture wherever that is used,
# so setting it in a project's ini does not by itself activate the plugin.
POOL_INI_FLAG = "simpler_one_runtime_per_device"
# A dispatcher-style project's own names (the fixture simpler's pool serves, the options that
# hold the run's platform and devices): settings of the project, which activate nothing.
WORKER_FIXTURE_INI = "simpler_worker_fixture"
DEFAULT_WORKER_FIXTURE = "worker"
PROJECT_OPTION_INIS = {
    "simpler_platform_option": "the project's own option that holds the run's platform under "
    "simpler run (its dest, e.g. platform)",
    "simpler_device_option": "the project's own option that holds the devices this process owns "
    "under simpler run (its dest, e.g. device)",
}


@dataclass(frozen=True)
class PluginSettings:
    platform: str
    devices: list[int]
    report: Path | None  # None: write no records (a plain pytest run outside simpler)
    faults: str
    recovery: bool
    retry_role: str | None  # in the retry phase: re-running poison-skip victims or a trigger
    class_lines: bool
    told: ChildContract = field(default_factory=ChildContract)  # what simpler run told it

    @property
    def phase(self) -> str | None:
        """Which tests this process runs, as the run told it; None: all of them."""
        return self.told.phase or None

    @property
    def attempt(self) -> int:
        return self.told.attempt


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("simpler", "simpler device orchestration (active only when asked)")
    group.addoption(
        "--simpler-platform", help=f"device platform (a5sim, a2a3sim); env {PLATFORM_ENV}"
    )
    group.addoption(
        "--simpler-device", help=f"device ids: 0, 0-7, 0,2,5, 0,2-4,7; env {DEVICES_ENV}"
    )
    group.addoption("--simpler-report", help=f"report file; env {REPORT_ENV}")
    group.addoption(
        "--simpler-sim-fault",
        action="append",
        default=[],
        help="inject a simulated fault (repeatable)",
    )
    group.addoption(
        "--simpler-fail-on-flaky", action="store_true", help="count flaky tests as failures"
    )
    group.addoption(
        "--simpler-max-parallel", type=int, help="xdist workers to use (at most one per device)"
    )
    group.addoption(
        "--simpler-no-recovery",
        action="store_true",
        help="never reset a poisoned worker (to see the cascade simpler prevents)",
    )
    group.addoption(
        "--simpler-class-lines", action="store_true", help="one line per test class instead of dots"
    )
    group.addoption(
        "--simpler-one-runtime-per-device",
        action="store_true",
        help="retire one runtime's pooled worker before another runtime's starts on the "
        f"same device (a device context that holds one runtime); ini {POOL_INI_FLAG}",
    )
    # Set by `simpler run` (which tells the phase in the environment, ``ChildContract``).
    group.addoption("--simpler-retry-role", choices=RETRY_ROLES, help="(set by simpler run)")
    group.addoption(
        "--simpler-no-device-tests",
        metavar="FILE",
        help="(set by simpler run) the L2 tests that use no device, a node id a line: xdist "
        "workers that hold no device run only these",
    )
    group.addoption(
        "--simpler-devices-freed",
        metavar="FILE",
        help="(set by simpler run) name in FILE each xdist worker that held a device as it "
        "ends, and say when none holds one: the Resource phase starts on the devices meanwhile",
    )
    group.addoption(
        "--simpler-only-tests",
        metavar="FILE",
        help="(set by simpler run --affected-since) run only these tests, a node id a line: "
        "the rest are deselected",
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
    for key, text in INI_TEXTS.items():
        parser.addini(key, text, type="string", default="")
    for key, text in INI_FLAGS.items():
        parser.addini(key, text, type="bool", default=False)
    parser.addini(
        WORKER_FIXTURE_INI,
        "the project's worker fixture: simpler's pool serves it to the L2 tests that use it",
        type="string",
        default=DEFAULT_WORKER_FIXTURE,
    )
    for key, text in PROJECT_OPTION_INIS.items():
        parser.addini(key, text, type="string", default="")
    parser.addini(
        FORK_CHILDREN_INI,
        "start simpler run's children (Resource, retry, isolated) forked from a warm process; "
        "false: as fresh interpreters (a runtime that cannot survive a fork)",
        type="bool",
        default=True,
    )
    parser.addini(
        POOL_INI_FLAG,
        "retire one runtime's pooled worker before another's starts on the same device "
        "(as --simpler-one-runtime-per-device)",
        type="bool",
        default=False,
    )


FORK_CHILDREN_INI = "simpler_fork_children"


def worker_fixture_name(config: pytest.Config) -> str:
    """The fixture simpler's pool serves (``simpler_worker_fixture``; default ``worker``)."""
    return str(config.getini(WORKER_FIXTURE_INI) or DEFAULT_WORKER_FIXTURE).strip()


def one_runtime_per_device(config: pytest.Config) -> bool:
    """Read when the pool is made, so a conftest's ``pytest_configure`` may still set
    ``config.option.simpler_one_runtime_per_device``."""
    return bool(
        getattr(config.option, "simpler_one_runtime_per_device", False)
        or config.getini(POOL_INI_FLAG)
    )


def plugin_active(config: pytest.Config, *, nested: bool = False) -> bool:
    """Asked for: a process ``simpler run`` started, or a ``--simpler-...`` option or ini key.

    Inactive, the plugin writes nothing, prints nothing and leaves xdist alone. ``nested``: a
    pytest session run inside a test of an active one (pytester's in-process runs): the
    environment simpler gave the outer session is not this one's asking.
    """
    if started_by_run(os.environ) and not nested:
        return True
    if any(getattr(config.option, dest, None) for dest in OPTION_DESTS):
        return True
    return any(config.getini(key) for key in INI_KEYS)


_TOLD = pytest.StashKey[ChildContract]()


def told_by_run(config: pytest.Config, *, nested: bool = False) -> ChildContract:
    """What simpler run told this process (``ChildContract``), read once per session; a bad
    value is a pytest.UsageError naming its variable. A session nested in a test of an active
    one was told nothing: the outer run's environment is not its own."""
    told = config.stash.get(_TOLD, None)
    if told is None:
        try:
            told = ChildContract() if nested else ChildContract.from_env(os.environ)
        except ValueError as error:
            raise pytest.UsageError(str(error)) from None
        config.stash[_TOLD] = told
    return told


def resolve_settings(
    config: pytest.Config, *, active: bool = True, nested: bool = False
) -> PluginSettings:
    """Validate the options; a bad one is a pytest.UsageError naming it.

    In a process of a run, what the run told it wins; elsewhere an option given wins over the
    environment, then the ini. Inactive, the settings only serve the fixtures; ``nested``, the
    outer run's environment is not this session's (docs/design.md, "Where a setting comes from").
    """
    told = told_by_run(config, nested=nested)
    environ: Mapping[str, str] = {} if nested else os.environ
    option = config.option
    # A run's process: the run's word first, as its flags once came last on the command line,
    # so a project's addopts never moves it off the cards the run locked for it.
    run = told if told.phase else ChildContract()
    platform = (
        run.platform
        or option.simpler_platform
        or told.platform
        or config.getini("simpler_platform")
        or "a5sim"
    )
    if not _platform_provided(config, platform):
        raise pytest.UsageError(no_runner_message(platform))
    spec = (
        run.devices
        or option.simpler_device
        or told.devices
        or config.getini("simpler_device")
        or "0"
    )
    try:
        # "none": a process of the run that holds no device (its tests use none).
        devices = [] if spec.strip() == NO_DEVICE_SPEC else parse_devices(spec)
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    if not active:
        return PluginSettings(platform, devices, None, "", True, None, False)
    explicit_report = run.report or option.simpler_report or told.report or _ini_report(config)
    records_wanted = explicit_report or told.phase
    report = report_path(explicit_report).resolve() if records_wanted else None
    faults = ",".join(
        part for part in [environ.get(SIM_FAULTS_ENV, ""), *option.simpler_sim_fault] if part
    )
    return PluginSettings(
        platform=platform,
        devices=devices,
        report=report,
        faults=faults,
        recovery=not option.simpler_no_recovery,
        retry_role=option.simpler_retry_role,
        class_lines=bool(
            option.simpler_class_lines or config.getini("simpler_class_lines") or told.phase
        ),
        told=told,
    )


def no_runner_message(platform: str) -> str:
    """The one line for a platform that no runner is provided for."""
    return (
        f"unknown platform {platform!r}: no runner is provided for it (built in: "
        f"{', '.join(BUILTIN_PLATFORMS)}; implement the pytest_simpler_create_runner hook in a "
        f"conftest.py, or set {RUNNER_LIBRARY_ENV} to a library implementing runner.h)"
    )


def _platform_provided(config: pytest.Config, platform: str) -> bool:
    """Built in, a runner library, or a project's ``pytest_simpler_create_runner`` hook.

    The up-front child of ``simpler run`` (``--simpler-args``) refuses nothing: it reports
    whether a hook exists, and ``simpler run`` decides.
    """
    if platform in BUILTIN_PLATFORMS or os.environ.get(RUNNER_LIBRARY_ENV):
        return True
    return bool(config.option.simpler_args) or has_runner_hook(config)


def _ini_report(config: pytest.Config) -> str | None:
    """The ini's report file, relative to the ini file's folder."""
    value = str(config.getini("simpler_report") or "")
    if not value:
        return None
    base = config.inipath.parent if config.inipath is not None else config.rootpath
    return str(base / value)
