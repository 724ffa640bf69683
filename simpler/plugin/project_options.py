"""A dispatcher-style project's own ``--platform`` and ``--device``, set to what simpler gives
this process, and simpler's own ``--simpler-...`` options to what the run told it.

The project's options (ini ``simpler_platform_option``, ``simpler_device_option``) hold them
before its ``pytest_configure`` (docs/architecture.md, "A project's own names").
"""

from __future__ import annotations

import pytest

from simpler.contract import NO_DEVICE_SPEC
from simpler.devices import format_devices
from simpler.plugin.device_assignment import worker_device
from simpler.plugin.options import PROJECT_OPTION_INIS, PluginSettings

__all__ = ["inject_project_options", "missing_project_option", "show_run_settings"]

PLATFORM_OPTION, DEVICE_OPTION = PROJECT_OPTION_INIS


def _dest(config: pytest.Config, key: str) -> str:
    """The option an ini key names, as ``getoption`` takes it (``--device`` -> ``device``)."""
    return str(config.getini(key) or "").strip().lstrip("-").replace("-", "_")


def missing_project_option(config: pytest.Config) -> str | None:
    """One line naming an ini key whose option the project does not have; None when both exist."""
    for key in PROJECT_OPTION_INIS:
        dest = _dest(config, key)
        if dest and not hasattr(config.option, dest):
            return (
                f"ini {key} = {config.getini(key)}: this project has no option {dest!r} "
                "(name one its conftest adds, as config.getoption takes it)"
            )
    return None


def inject_project_options(config: pytest.Config, settings: PluginSettings) -> None:
    """Set the project's options to this process's platform and devices (a missing one is left
    to :func:`missing_project_option`, which the caller turns into a usage error)."""
    if missing_project_option(config) is not None:
        return
    platform = _dest(config, PLATFORM_OPTION)
    if platform:
        setattr(config.option, platform, settings.platform)
    device = _dest(config, DEVICE_OPTION)
    owned = _owned_devices(config, settings)
    if device and owned:
        setattr(config.option, device, format_devices(owned))


def show_run_settings(config: pytest.Config, settings: PluginSettings) -> None:
    """In a process simpler run started, simpler's options hold what it was told, which wins
    over what was given (an xdist worker: every device of the run, as its controller's do)."""
    told = settings.told
    if not told.phase:
        return
    option = config.option
    option.simpler_platform = settings.platform
    spec = format_devices(settings.devices) if settings.devices else NO_DEVICE_SPEC
    option.simpler_device = spec if told.devices else option.simpler_device or spec
    if settings.report is not None:
        option.simpler_report = str(settings.report)


def _owned_devices(config: pytest.Config, settings: PluginSettings) -> list[int]:
    """An xdist worker owns the one device its controller handed it (none when every device is
    held: its option keeps what it was, and simpler's own guard fails its device tests)."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        return list(settings.devices)
    device = worker_device(settings.devices, workerinput)
    return [] if device is None else [device]
