"""A dispatcher-style project's own names, bound by ini keys: its worker fixture served by the
pool, its options holding the platform and devices, its own runtestloop bypassed; and plain
pytest, where all of it is the project's as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simpler.plugin.served_fixture import MIN_PYTEST

pytest_plugins = ["pytester"]

# Under simpler, this project's worker fixture is served by the pool, which an older pytest
# cannot do: there the run stops with one line (docs/setup.md, Versions), tested elsewhere.
SERVED = pytest.mark.skipif(
    tuple(pytest.version_tuple[:2]) < MIN_PYTEST,
    reason=f"serving a project's worker fixture needs pytest {'.'.join(map(str, MIN_PYTEST))} "
    f"(this is pytest {pytest.__version__})",
)

ACTIVE = ("--simpler-platform", "fake", "--simpler-device", "4,5")

PROJECT = """
import json, os, pytest

class FakeRunner:
    unusable = False
    def __init__(self, device): self.device = device
    def init(self): pass
    def probe(self): return True
    def force_reset(self): pass
    def finalize(self): return 0
    def close(self): pass

def pytest_simpler_create_runner(platform, runtime, device):
    return FakeRunner(device) if platform == "fake" else None

def pytest_addoption(parser):
    parser.addoption("--platform", default=None)
    parser.addoption("--device", default="0")

def pytest_configure(config):
    seen = {"platform": config.option.platform, "device": config.option.device}
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(f"seen-{worker}.json", "w") as out:
        json.dump(seen, out)

@pytest.fixture
def st_worker():
    return "the project's own"
"""

TESTS = """
import pytest

def test_pooled(st_worker):
    assert type(st_worker).__name__ == "FakeRunner", st_worker

@pytest.mark.device_count(2)
def test_resource(st_worker):
    assert st_worker == "the project's own"
"""

OVERRIDE = """
import pytest

@pytest.fixture(scope="class")
def st_worker():
    return "isolated"
"""


@pytest.fixture(autouse=True)
def _outside_simpler(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SIMPLER_PHASE", "SIMPLER_REPORT", "SIMPLER_PLATFORM", "SIMPLER_DEVICES"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    # Under `pytest -n`, this process is an xdist worker: its name must not leak into the
    # project's own plain pytest run, which names what it saw by its worker.
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    pytester.makeini(
        "[pytest]\nsimpler_worker_fixture = st_worker\n"
        "simpler_platform_option = platform\nsimpler_device_option = device\n"
    )
    pytester.makeconftest(PROJECT)
    pytester.makepyfile(test_pool=TESTS)
    isolated = pytester.mkpydir("isolated")
    (isolated / "conftest.py").write_text(OVERRIDE)
    (isolated / "test_isolated.py").write_text(
        "def test_isolated(st_worker):\n    assert st_worker == 'isolated'\n"
    )
    return pytester


def _seen(pytester: pytest.Pytester, worker: str = "main") -> dict[str, str]:
    return dict(json.loads((pytester.path / f"seen-{worker}.json").read_text()))


@SERVED
def test_the_pool_serves_the_named_fixture_except_overrides_and_resource_tests(
    project: pytest.Pytester,
) -> None:
    project.runpytest_inprocess(*ACTIVE).assert_outcomes(passed=3)


def test_plain_pytest_keeps_the_projects_fixture_and_options(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_pool='def test_pooled(st_worker):\n    assert st_worker == "the project\'s own"\n'
    )
    project.runpytest_inprocess("--platform", "mine").assert_outcomes(passed=2)
    assert _seen(project) == {"platform": "mine", "device": "0"}


@SERVED
def test_the_projects_options_hold_the_platform_and_devices_before_its_configure(
    project: pytest.Pytester,
) -> None:
    project.runpytest_inprocess(*ACTIVE, "--platform", "mine", "--device", "9")
    assert _seen(project) == {"platform": "fake", "device": "4-5"}


@SERVED
def test_each_xdist_worker_sees_only_its_own_device(project: pytest.Pytester) -> None:
    project.runpytest_subprocess(*ACTIVE, "-n", "2", "-p", "xdist").assert_outcomes(passed=3)
    seen = {worker: _seen(project, worker)["device"] for worker in ("gw0", "gw1")}
    assert sorted(seen.values()) == ["4", "5"], seen


@SERVED
def test_the_projects_own_dispatcher_runs_in_plain_pytest_only(
    project: pytest.Pytester,
) -> None:
    project.makeconftest(
        PROJECT
        + "\ndef pytest_runtestloop(session):\n"
        + "    open('dispatched', 'w').close()\n    return True\n"
    )
    project.runpytest_inprocess("--platform", "mine").assert_outcomes()
    assert (project.path / "dispatched").exists()
    (project.path / "dispatched").unlink()
    project.runpytest_inprocess(*ACTIVE).assert_outcomes(passed=3)
    assert not (project.path / "dispatched").exists()


TRYFIRST_LOOP = """
@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    return True
"""


@SERVED
def test_a_tryfirst_loop_of_the_root_conftest_is_bypassed(project: pytest.Pytester) -> None:
    project.makeconftest(PROJECT + TRYFIRST_LOOP)
    project.runpytest_inprocess(*ACTIVE).assert_outcomes(passed=3)


@SERVED
def test_a_loop_that_runs_before_simplers_stops_the_session(project: pytest.Pytester) -> None:
    """A folder's conftest is registered during collection, after simpler's bypass: its
    tryfirst loop would be called first, and nothing can stop it dispatching."""
    (project.path / "isolated" / "conftest.py").write_text(
        "import pytest\n" + OVERRIDE + TRYFIRST_LOOP
    )
    done = project.runpytest_inprocess(*ACTIVE)
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    done.stderr.fnmatch_lines(
        ["ERROR: */isolated/conftest.py: its pytest_runtestloop runs before simpler's*"]
    )


@SERVED
def test_a_wrapper_around_the_loop_still_wraps_it_once(project: pytest.Pytester) -> None:
    project.makeconftest(
        PROJECT + "\n@pytest.hookimpl(wrapper=True)\ndef pytest_runtestloop(session):\n"
        "    with open('wrapped', 'a') as out:\n        out.write('x')\n    return (yield)\n"
    )
    project.runpytest_inprocess(*ACTIVE).assert_outcomes(passed=3)
    assert Path(project.path / "wrapped").read_text() == "x"


@pytest.mark.parametrize("key", ["simpler_platform_option", "simpler_device_option"])
def test_an_ini_key_naming_no_option_is_one_line(project: pytest.Pytester, key: str) -> None:
    done = project.runpytest_inprocess(*ACTIVE, "-o", f"{key}=devize")
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    done.stderr.fnmatch_lines([f"ERROR: ini {key} = devize: this project has no option 'devize'*"])
    assert not list(project.path.glob("seen-*.json"))  # nothing of the project's ran


def test_a_pytest_too_old_to_serve_the_fixture_stops_the_run_in_one_line(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The last pytest before the floor of the feature, whatever pytest runs this test.
    monkeypatch.setattr(pytest, "version_tuple", (*MIN_PYTEST[:1], MIN_PYTEST[1] - 1, 0))
    done = project.runpytest_inprocess(*ACTIVE)
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    needed = ".".join(map(str, MIN_PYTEST))
    done.stderr.fnmatch_lines(
        [
            "ERROR: ini simpler_worker_fixture = st_worker: serving a project's own worker "
            f"fixture needs pytest {needed} or later (this is pytest *)"
        ]
    )
    assert not list(project.path.glob("seen-*.json"))  # nothing of the project's ran


ADOPTER = """
import json

def pytest_configure(config):
    seen = {name: config.getoption(f"simpler_{name}", None) for name in ("platform", "device")}
    with open("seen-main.json", "w") as out:
        json.dump(seen, out)
"""


def test_a_process_of_a_run_finds_what_it_was_told_in_simplers_own_options(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run tells its processes in the environment; a conftest that reads
    ``config.getoption("simpler_platform")`` (docs/adopting.md) still sees the run's."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    told = {"SIMPLER_PHASE": "l2", "SIMPLER_PLATFORM": "a2a3sim", "SIMPLER_DEVICES": "4,5"}
    for name, value in {**told, "SIMPLER_REPORT": str(pytester.path / "r.jsonl")}.items():
        monkeypatch.setenv(name, value)
    pytester.makeconftest(ADOPTER)
    pytester.makepyfile(test_a="def test_a():\n    pass\n")
    pytester.runpytest_inprocess("-p", "no:xdist").assert_outcomes(passed=1)
    assert _seen(pytester) == {"platform": "a2a3sim", "device": "4-5"}
    monkeypatch.delenv("SIMPLER_PHASE")  # a plain run: the options stay the user's
    pytester.runpytest_inprocess("-p", "no:xdist").assert_outcomes(passed=1)
    assert _seen(pytester) == {"platform": None, "device": None}
