"""Where a dispatcher-style project meets simpler: its options, its worker fixture, its loop.

``hooks.py`` calls :func:`bind_options` (``pytest_cmdline_main``), :func:`bind_project`
(``pytest_configure``) and :func:`collection_problem` (``pytest_collection_finish``). A
problem is one line; in the up-front collection :func:`binding_problem` is written into its
answer instead of raised (docs/architecture.md, "A project's own names").
"""

from __future__ import annotations

import pytest

from simpler.plugin.options import PluginSettings
from simpler.plugin.project_loop import BYPASS_NAME, DispatcherBypass, unbypassable_loop
from simpler.plugin.project_options import (
    inject_project_options,
    missing_project_option,
    show_run_settings,
)
from simpler.plugin.served_fixture import (
    FixtureServer,
    missing_worker_fixture,
    served_fixture_problem,
)

__all__ = ["bind_options", "bind_project", "binding_problem", "collection_problem"]

SERVER_NAME = "simpler-fixture-server"


def binding_problem(config: pytest.Config) -> str | None:
    """The first problem known before collection; None when there is none."""
    return (
        missing_project_option(config)
        or served_fixture_problem(config)
        or unbypassable_loop(config)
    )


def collection_problem(config: pytest.Config, items: list[pytest.Item]) -> str | None:
    """The first problem once the suite is collected (the conftests of its folders loaded)."""
    return binding_problem(config) or missing_worker_fixture(config, items)


def bind_options(config: pytest.Config, settings: PluginSettings) -> None:
    _refuse(config, missing_project_option(config) or served_fixture_problem(config))
    show_run_settings(config, settings)
    inject_project_options(config, settings)


def bind_project(config: pytest.Config) -> None:
    plugins = config.pluginmanager
    if not plugins.has_plugin(BYPASS_NAME):
        plugins.register(DispatcherBypass(config), BYPASS_NAME)
        plugins.register(FixtureServer(), SERVER_NAME)
    _refuse(config, unbypassable_loop(config))


def _refuse(config: pytest.Config, problem: str | None) -> None:
    if problem is not None and not config.option.simpler_args:
        raise pytest.UsageError(problem)
