"""simpler is the dispatcher: a project's own ``pytest_runtestloop`` does not dispatch inside
simpler's processes.

A dispatcher-style project's conftest often has a ``pytest_runtestloop`` that sends its tests
to child processes of its own (per runtime, per device). Inside a process that simpler runs,
that would run every test a second time, outside simpler's pool and records. With the plugin
active, :class:`DispatcherBypass` (registered after the initial conftests) answers the hook
first and calls, through pluggy's public ``subset_hook_caller``, the loops that would have run
had the conftests none: pytest's own, or xdist's controller or worker loop. The wrappers around
the hook (a conftest's included) already wrap this call and run once, as always.

A conftest's loop that runs before simpler's (a ``tryfirst`` one from a conftest registered
later) cannot be bypassed: :func:`unbypassable_loop` names it, and the run stops with a usage
error. Inactive, nothing is registered and the project's loop runs as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

__all__ = ["BYPASS_NAME", "DispatcherBypass", "unbypassable_loop"]

BYPASS_NAME = "simpler-dispatcher-bypass"
HOOK = "pytest_runtestloop"


def _is_conftest(plugin: object) -> bool:
    return Path(str(getattr(plugin, "__file__", "") or "")).name == "conftest.py"


def _loops(config: pytest.Config) -> list[Any]:
    """The hook's implementations, in pluggy's order: the last one is called first."""
    return list(getattr(config.pluginmanager.hook, HOOK).get_hookimpls())


class DispatcherBypass:
    """Registered only with the plugin active; see the module's docstring."""

    def __init__(self, config: pytest.Config) -> None:
        self._config = config

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> object:
        impls = _loops(self._config)
        mine = next(i for i, impl in enumerate(impls) if impl.plugin is self)
        # Keep what would run after this one had no conftest a loop: not the wrappers (they
        # wrap this call already), not what ran before it, not a conftest's own dispatch.
        keep = {
            id(impl.plugin)
            for impl in impls[:mine]
            if not (impl.hookwrapper or impl.wrapper) and not _is_conftest(impl.plugin)
        }
        skip = [impl.plugin for impl in impls if id(impl.plugin) not in keep]
        caller = self._config.pluginmanager.subset_hook_caller(HOOK, remove_plugins=skip)
        return caller(session=session)


def unbypassable_loop(config: pytest.Config) -> str | None:
    """One line naming a conftest whose own loop would run before simpler's; None when none."""
    impls = _loops(config)
    mine = [i for i, impl in enumerate(impls) if isinstance(impl.plugin, DispatcherBypass)]
    if not mine:
        return None
    for impl in impls[mine[0] + 1 :]:
        if not (impl.hookwrapper or impl.wrapper) and _is_conftest(impl.plugin):
            return (
                f"{impl.plugin.__file__}: its {HOOK} runs before simpler's (tryfirst) and "
                "would dispatch the tests itself; under simpler run, simpler is the dispatcher "
                "(drop tryfirst, or return None from it when simpler's plugin is active)"
            )
    return None
