"""simpler's pool serves the project's own worker fixture (ini ``simpler_worker_fixture``).

The pooled tests receive the runner the project's ``pytest_simpler_create_runner`` created;
a folder whose conftest overrides the fixture, and a Resource test, keep the project's own.
:class:`FixtureServer` wins over the root conftest by registering last, in a ``trylast``
``pytest_sessionstart`` (pytest 9.2 and later): docs/architecture.md, "The served fixture".
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from simpler.plugin.fixtures import pooled_worker
from simpler.plugin.needs import device_need
from simpler.plugin.options import DEFAULT_WORKER_FIXTURE, WORKER_FIXTURE_INI, worker_fixture_name

__all__ = ["FixtureServer", "missing_worker_fixture", "served_fixture_problem"]

SERVED_NAME = "simpler-served-worker-fixture"
# The first pytest whose fixture lookup puts the last-registered session-wide definition closest
# (on 9.1 the project's root conftest still wins: measured, tests/ut/test_project_binding.py).
MIN_PYTEST = (9, 2)


def served_fixture_problem(config: pytest.Config) -> str | None:
    """One line when this pytest cannot serve a fixture of the project's; None when it can."""
    name = worker_fixture_name(config)
    if name == DEFAULT_WORKER_FIXTURE or tuple(pytest.version_tuple[:2]) >= MIN_PYTEST:
        return None
    return (
        f"ini {WORKER_FIXTURE_INI} = {name}: serving a project's own worker fixture needs "
        f"pytest {'.'.join(map(str, MIN_PYTEST))} or later (this is pytest {pytest.__version__})"
    )


def missing_worker_fixture(config: pytest.Config, items: list[pytest.Item]) -> str | None:
    """One line when the ini key names a fixture no collected test asks for (a typo would
    otherwise pool nothing and leave every test on the project's own worker)."""
    name = worker_fixture_name(config)
    if name == DEFAULT_WORKER_FIXTURE or not items:
        return None
    if any(name in getattr(item, "fixturenames", ()) for item in items):
        return None
    return (
        f"ini {WORKER_FIXTURE_INI} = {name}: no collected test asks for a fixture named {name!r} "
        "(name the fixture the project's device tests take)"
    )


def _serving_plugin(name: str) -> object:
    """A plugin whose one fixture, called ``name``, serves the pool to pooled L2 tests."""

    def serve(self: object, request: pytest.FixtureRequest) -> Iterator[Any]:
        if device_need(request.node) is not None:
            # A Resource test: the project's own definition, one level up.
            yield request.getfixturevalue(name)
            return
        for pooled in pooled_worker(request):
            yield pooled if name == DEFAULT_WORKER_FIXTURE else pooled.runner

    serve.__doc__ = f"simpler's pooled worker, served as the project's {name!r} fixture."
    fixture = pytest.fixture(name=name)(serve)
    return type("ServedWorkerFixture", (), {"serve": fixture})()


class FixtureServer:
    """Registers the serving plugin once the root conftest's fixtures are known."""

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        plugins = session.config.pluginmanager
        if not plugins.has_plugin(SERVED_NAME):
            plugins.register(_serving_plugin(worker_fixture_name(session.config)), SERVED_NAME)
