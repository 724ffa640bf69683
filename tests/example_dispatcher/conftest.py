"""The dispatcher example's conftest: a suite in the shape of a team's own device dispatcher.

Its own ``--platform`` and ``--device``; a ``pytest_configure`` that gives each xdist worker
its share of ``--device``; a ``pytest_runtestloop`` that sends the tests of each runtime to
a child pytest of their own; the worker fixture ``st_worker``; a test class's runtime in
``_st_runtime`` and its cases (with their device counts) in a ``CASES`` dict.

Everything simpler needs is the block at the end, and three lines of ``pytest.ini``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import simpler  # simpler: the adoption block at the end

from stsim import PLATFORMS, StL3Worker, StWorker, open_worker


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--platform", default=None, help="target platform: stsim (required)")
    parser.addoption("--device", default="0", help="device ids: 0, 0-3, 4,5")
    parser.addoption("--st-child", action="store_true", help="(set by the dispatcher)")


def parse_devices(spec: str) -> list[int]:
    ids: list[int] = []
    for part in spec.split(","):
        first, _, last = part.partition("-")
        ids += range(int(first), int(last or first) + 1)
    return ids


def pytest_configure(config: pytest.Config) -> None:
    # Each xdist worker takes its own device of --device.
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        ids = parse_devices(config.option.device)
        config.option.device = str(ids[int(worker[2:]) % len(ids)])


def runtime_of(item: pytest.Item) -> str:
    return str(getattr(item.cls, "_st_runtime", "host_build_graph"))


def case_of(item: pytest.Item) -> dict[str, Any]:
    callspec = getattr(item, "callspec", None)
    cases = getattr(item.cls, "CASES", {})
    return dict(cases[callspec.params["case"]]) if callspec and "case" in callspec.params else {}


def device_count(item: pytest.Item) -> int | None:
    """A level-3 class's case names how many devices it spans; a level-2 test needs none."""
    return case_of(item).get("device_count") if getattr(item.cls, "_st_level", 2) >= 3 else None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    cases = getattr(metafunc.cls, "CASES", None)
    if cases and "case" in metafunc.fixturenames:
        metafunc.parametrize("case", list(cases))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    platform = config.getoption("platform")
    for item in items:
        wanted = case_of(item).get("platforms")
        if platform is None:
            item.add_marker(pytest.mark.skip(reason="--platform required"))
        elif wanted and platform not in wanted:
            item.add_marker(pytest.mark.skip(reason=f"runs on {', '.join(wanted)} only"))


def pytest_runtestloop(session: pytest.Session) -> bool | None:
    """The dispatcher: each runtime's tests in a child pytest of their own, one after another."""
    config = session.config
    if config.getoption("st_child") or config.option.collectonly or not session.items:
        return None
    groups: dict[str, list[str]] = {}
    for item in session.items:
        groups.setdefault(runtime_of(item), []).append(item.nodeid)
    verbosity = ["-" + "v" * config.option.verbose] if config.option.verbose > 0 else []
    for runtime, nodeids in groups.items():
        argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--st-child", *verbosity]
        argv += [f"--platform={config.getoption('platform')}", f"--device={config.option.device}"]
        print(f"\nst-dispatch: {len(nodeids)} test(s) of runtime {runtime} in a child", flush=True)
        argv += nodeids
        done = subprocess.run(argv, cwd=config.rootpath, capture_output=True, text=True)
        print(done.stdout, done.stderr, sep="", flush=True)
        if done.returncode != 0:
            session.testsfailed += 1
    return True


@pytest.fixture
def st_worker(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A level-2 test's worker on this process's first device; a level-3 test's across its
    case's devices."""
    config, item = request.config, request.node
    devices = parse_devices(config.option.device)
    platform, runtime = config.getoption("platform"), runtime_of(item)
    needed = device_count(item)
    if needed is None:
        worker: StWorker | StL3Worker = open_worker(devices[0], platform, runtime)
    elif len(devices) < needed:
        pytest.skip(f"needs {needed} devices, --device {config.option.device} has {len(devices)}")
    else:
        worker = StL3Worker(devices[:needed], platform, runtime)
        worker.init()
    yield worker
    worker.close()


# --- simpler: the adoption. pytest.ini names st_worker, --platform and --device. -----------
FAILED = re.compile(r"(\w+) on device (\d+) failed with code (\d+)")


def pytest_simpler_create_runner(platform: str, runtime: str, device: int) -> Any:
    if platform not in PLATFORMS:
        return None
    return simpler.InitCloseRunner(open_worker=lambda: open_worker(device, platform, runtime))


def pytest_simpler_device_error(error: BaseException) -> Any:
    found = FAILED.search(str(error)) if isinstance(error, RuntimeError) else None
    if found is None:
        return None
    api, device, code = found[1], int(found[2]), int(found[3])
    return simpler.DeviceRuntimeError(code, api, str(error), device=device, platform="stsim")


def pytest_simpler_runtime(item: pytest.Item) -> str:
    return runtime_of(item)


def pytest_simpler_device_count(item: pytest.Item) -> int | None:
    return device_count(item)
