"""simpler is the dispatcher: a project's own ``pytest_runtestloop`` does not dispatch inside
simpler's processes.

With the plugin active, :class:`DispatcherBypass` answers the hook first and calls, through
pluggy's ``subset_hook_caller``, the loops the conftests would have left (pytest's, xdist's).
A loop that runs before it cannot be bypassed: :func:`unbypassable_loop` names it, a usage
error (docs/architecture.md, "simpler is the dispatcher").
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
