"""A project's own runtime, through its conftest hooks: the runner it creates and the
device errors it recognises. The built-in platforms fall back to ``open_runner``."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest

from simpler.errors import DeviceRuntimeError
from simpler.init_close import InitCloseRunner

__all__ = [
    "REQUIRED_METHODS",
    "RunnerContractError",
    "has_runner_hook",
    "missing_methods",
    "runner_factory",
    "translator",
]

REQUIRED_METHODS = ("init", "probe", "force_reset", "finalize", "close")
REQUIRED_ATTRIBUTES = ("unusable",)
Translate = Callable[[BaseException | None], BaseException | None]
# One translation per session: its hook's failure is reported once, whoever asks.
_TRANSLATOR = pytest.StashKey[Translate]()


class RunnerContractError(Exception):
    """The runner ``pytest_simpler_create_runner`` returned lacks what the lifecycle calls."""


def has_runner_hook(config: pytest.Config) -> bool:
    """Some loaded plugin or conftest implements ``pytest_simpler_create_runner``."""
    plugins = getattr(config, "pluginmanager", None)
    caller = getattr(getattr(plugins, "hook", None), "pytest_simpler_create_runner", None)
    return caller is not None and bool(caller.get_hookimpls())


def missing_methods(runner: object) -> list[str]:
    """What the lifecycle needs of a runner and ``runner`` does not have."""
    missing = [name for name in REQUIRED_METHODS if not callable(getattr(runner, name, None))]
    return missing + [name for name in REQUIRED_ATTRIBUTES if not hasattr(runner, name)]


def runner_factory(config: pytest.Config, runtime: str) -> Callable[[str, int], Any]:
    """The lifecycle's factory for ``runtime``: the project's hook first, then ``open_runner``."""

    def create(platform: str, device: int) -> Any:
        runner = config.hook.pytest_simpler_create_runner(
            platform=platform, runtime=runtime, device=device
        )
        if runner is None:
            from simpler.runner import open_runner

            return open_runner(platform, device, runtime=runtime)
        missing = missing_methods(runner)
        if missing:
            raise RunnerContractError(
                f"pytest_simpler_create_runner returned a {type(runner).__name__} for {platform} "
                f"device {device} without {', '.join(missing)} (a runner needs init, probe, "
                "force_reset, finalize, close and unusable)"
            )
        if isinstance(runner, InitCloseRunner):
            # It tells device errors from the rest the way the project's hook does.
            runner.use_translator(translator(config))
        return runner

    return create


def translator(config: pytest.Config) -> Translate:
    """The project's exceptions as ``DeviceRuntimeError`` through ``pytest_simpler_device_error``.

    A hook that raises leaves the original error standing; its failure is reported once
    (one translation per session: the pool and every ``InitCloseRunner`` share it).
    """
    stash: pytest.Stash | None = getattr(config, "stash", None)  # None: a stand-in config
    if stash is not None and _TRANSLATOR in stash:
        return stash[_TRANSLATOR]
    reported: list[str] = []

    def translate(error: BaseException | None) -> BaseException | None:
        if error is None or isinstance(error, DeviceRuntimeError):
            return error
        try:
            translated = config.hook.pytest_simpler_device_error(error=error)
        except Exception as hook_error:  # a project's hook must never hide the test's error
            if not reported:
                reported.append(repr(hook_error))
                _say_once(
                    config,
                    f"simpler: pytest_simpler_device_error raised {hook_error!r}; the original "
                    "errors stand untranslated (reported once)",
                )
            return error
        return translated if isinstance(translated, DeviceRuntimeError) else error

    if stash is not None:
        stash[_TRANSLATOR] = translate
    return translate


def _say_once(config: pytest.Config, line: str) -> None:
    """One line on the terminal (not a warning: a ``-W error`` suite must not turn it into
    an error in the middle of a worker's check)."""
    plugins = getattr(config, "pluginmanager", None)
    terminal = plugins.get_plugin("terminalreporter") if plugins is not None else None
    if terminal is not None:
        terminal.write_line(line)
    else:
        print(line, file=sys.__stderr__ or sys.stderr, flush=True)
