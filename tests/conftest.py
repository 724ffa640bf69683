"""Shared fixtures: every test gets cards nobody else used, and no faults it did not ask for."""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest
from postgres_server import PostgresServer, find_server_bin, start_server

# Short op-timeout so that reaping a hung op costs the suite little time.
os.environ.setdefault("SIMPLER_OP_TIMEOUT_MS", "150")
# Device locks of our own: another run on this host (a developer's, another checkout's
# tests) must not make these tests wait for its cards, nor they for ours. Not in a pytest
# that `simpler run` started (the scene suite): there the orchestrator holds the locks.
if "SIMPLER_LOCK_DIR" not in os.environ and not os.environ.get("SIMPLER_PHASE"):
    os.environ["SIMPLER_LOCK_DIR"] = tempfile.mkdtemp(prefix="simpler-test-locks-")
    atexit.register(shutil.rmtree, os.environ["SIMPLER_LOCK_DIR"], ignore_errors=True)

# A project a test runs (a child pytest, `simpler run`) must see the environment a user's
# shell gives it, whether or not these tests run under xdist: a project's own conftest may
# read xdist's worker variables (the example dispatcher gives an xdist worker one device).
if not os.environ.get("SIMPLER_PHASE"):
    for _name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        os.environ.pop(_name, None)

PLATFORMS = ("a5sim", "a2a3sim")
_next_device = itertools.count(100)


@pytest.fixture(params=PLATFORMS)
def platform(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def fresh_device() -> Iterator[int]:
    """A device id no other test in this process has touched; force-reset afterwards."""
    from simpler import runner

    device = next(_next_device)
    yield device
    runner.configure_faults(None)  # an injected force_reset_fail must not outlive its test
    cleaner = runner.open_runner("a5sim", device)
    cleaner.force_reset()
    cleaner.close()


@pytest.fixture
def faults() -> Iterator[object]:
    """Configure injected faults for one test; cleared afterwards."""
    from simpler import runner

    yield runner.configure_faults
    runner.configure_faults(None)
    runner.set_test_context("", 1)


@pytest.fixture(scope="session")
def fake_cuda_driver(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A fake libcuda.so.1 (tests/fake_cuda): platform cuda's own code, run without a GPU."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent / "fake_cuda" / "build.py"
    spec = importlib.util.spec_from_file_location("fake_cuda_build", path)
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    try:
        return str(build.build_fake_driver(tmp_path_factory.mktemp("fake-cuda")))
    except build.FakeDriverUnavailable as error:
        pytest.skip(f"no fake CUDA driver here: {error}")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL server for this session (each xdist worker its own)."""
    folder = find_server_bin()
    if folder is None:
        pytest.skip("no PostgreSQL server binary (initdb, pg_ctl) on this machine")
    server = start_server(folder)
    yield server
    server.stop()


_next_database = itertools.count()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a new, empty database on the session's server."""
    return postgres_server.create_database(f"history_{os.getpid()}_{next(_next_database)}")
