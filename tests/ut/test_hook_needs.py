"""A test's runtime and device count from the project's hooks, beside the markers.

``pytest_simpler_runtime(item)`` and ``pytest_simpler_device_count(item)`` answer first; the
markers decide when no hook answers. A bad answer is one line and a usage error, at collection.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["pytester"]

# A runner for any platform: a worker with only init() and close(), and a run that says
# which runtime served it.
RUNNER_CONFTEST = """
import simpler

class Worker:
    def __init__(self, runtime):
        self.runtime = runtime
    def init(self): ...
    def close(self): ...

def pytest_simpler_create_runner(platform, runtime, device):
    return simpler.InitCloseRunner(lambda: Worker(runtime))
"""

SUITE = """
import pytest

class TestAttr:
    _st_runtime = "from_attr"

    def test_attr(self, worker):
        assert worker.key.runtime == "from_attr" == worker.runner.worker.runtime

    @pytest.mark.runtime("from_marker")
    def test_hook_wins_over_the_marker(self, worker):
        assert worker.key.runtime == "from_attr"

@pytest.mark.runtime("from_marker")
def test_no_answer_falls_back_to_the_marker(worker):
    assert worker.key.runtime == "from_marker"

def test_neither_is_the_default(worker):
    assert worker.key.runtime == "default"

def test_no_worker_is_never_asked(): ...
"""

RUNTIME_HOOK = """
def pytest_simpler_runtime(item):
    if item.cls is None and item.name == "test_no_worker_is_never_asked":
        raise AssertionError("asked the runtime of a test that uses no pooled worker")
    return getattr(item.cls, "_st_runtime", None)
"""

CASES_SUITE = """
import pytest

@pytest.mark.parametrize("case", ["one", "four", "none"])
def test_case(case): ...

@pytest.mark.device_count(2, est=7, timeout=30)
def test_marked(): ...

@pytest.mark.device_count(2, est=7)
@pytest.mark.parametrize("case", ["four"])
def test_hook_count_marker_est(case): ...

def test_l2(): ...
"""

CASES_HOOK = """
CASES = {"one": 1, "four": 4}

def pytest_simpler_device_count(item):
    callspec = getattr(item, "callspec", None)
    return CASES.get(callspec.params["case"]) if callspec else None
"""


@pytest.fixture(autouse=True)
def _outside_simpler(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SIMPLER_PHASE", "SIMPLER_REPORT", "SIMPLER_PLATFORM", "SIMPLER_DEVICES"):
        monkeypatch.delenv(name, raising=False)


def _listing(pytester: pytest.Pytester, *args: str) -> tuple[Any, Any]:
    listed = pytester.path / "listing.json"
    result = pytester.runpytest_inprocess(
        "-p", "no:xdist", "--collect-only", "--simpler-platform", "a5sim",
        f"--simpler-list={listed}", *args,
    )  # fmt: skip
    return result, json.loads(listed.read_text()) if listed.exists() else None


@pytest.mark.parametrize("active", [True, False])
def test_the_runtime_hook_answers_first_and_the_marker_when_it_passes(
    pytester: pytest.Pytester, active: bool
) -> None:
    pytester.makeconftest(RUNNER_CONFTEST + RUNTIME_HOOK)
    pytester.makepyfile(test_runtimes=SUITE)
    args = ("--simpler-platform", "a5sim") if active else ()
    result = pytester.runpytest_inprocess("-p", "no:xdist", *args)
    result.assert_outcomes(passed=5)


def test_the_device_count_hook_sizes_the_listing_and_the_marker_keeps_its_est(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(CASES_HOOK)
    pytester.makepyfile(test_cases=CASES_SUITE)
    result, listing = _listing(pytester)
    assert result.ret == 0
    sized = {e["nodeid"].split("::")[1]: (e["devices"], e.get("est_s")) for e in listing}
    assert sized == {
        "test_case[one]": (1, None),
        "test_case[four]": (4, None),
        "test_case[none]": (None, None),  # the hook passed and there is no marker: L2
        "test_marked": (2, 7),
        "test_hook_count_marker_est[four]": (4, 7),  # the hook's count, the marker's est
        "test_l2": (None, None),
    }


def test_each_phase_keeps_the_tests_the_hook_puts_in_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeconftest(CASES_HOOK)
    pytester.makepyfile(test_cases=CASES_SUITE)
    phase: dict[str, set[str]] = {}
    for name in ("l2", "resource"):
        monkeypatch.setenv("SIMPLER_PHASE", name)  # as simpler run tells its children
        result = pytester.runpytest_inprocess(
            "-p", "no:xdist", "-q", "--simpler-platform", "a5sim",
            "--simpler-report", str(pytester.path / f"{name}.jsonl"),
        )  # fmt: skip
        phase[name] = {
            r["nodeid"].split("::")[1]
            for r in map(json.loads, (pytester.path / f"{name}.jsonl").read_text().splitlines())
            if r["type"] == "test"
        }
        assert result.ret == 0
    assert phase["resource"] == {
        "test_case[one]", "test_case[four]", "test_marked", "test_hook_count_marker_est[four]",
    }  # fmt: skip
    assert phase["l2"] == {"test_case[none]", "test_l2"}


def test_only_the_conftests_of_a_tests_folder_answer_for_it(pytester: pytest.Pytester) -> None:
    pytester.mkpydir("sized")
    (pytester.path / "sized" / "conftest.py").write_text(
        "def pytest_simpler_device_count(item):\n    return 3\n"
    )
    (pytester.path / "sized" / "test_in.py").write_text("def test_in(): ...\n")
    pytester.makepyfile(test_out="def test_out(): ...\n")
    result, listing = _listing(pytester)
    assert result.ret == 0
    assert {e["nodeid"]: e["devices"] for e in listing} == {
        "sized/test_in.py::test_in": 3,
        "test_out.py::test_out": None,
    }


@pytest.mark.parametrize(
    ("hook", "said"),
    [
        ("def pytest_simpler_device_count(item):\n    return 0\n",
         "pytest_simpler_device_count returned 0 (int); a device count is an int of 1 or more"),
        ("def pytest_simpler_device_count(item):\n    return True\n",
         "pytest_simpler_device_count returned True (bool)"),
        ("def pytest_simpler_device_count(item):\n    return '2'\n",
         "pytest_simpler_device_count returned '2' (str)"),
        ("def pytest_simpler_device_count(item):\n    return 1.5\n",
         "pytest_simpler_device_count returned 1.5 (float)"),
        ("def pytest_simpler_device_count(item):\n    return {}['case']\n",
         "pytest_simpler_device_count raised KeyError('case')"),
        ("def pytest_simpler_runtime(item):\n    return 7\n",
         "pytest_simpler_runtime returned 7 (int); a runtime is a non-empty str"),
        ("def pytest_simpler_runtime(item):\n    return ''\n",
         "pytest_simpler_runtime returned '' (str)"),
    ],
)  # fmt: skip
def test_a_bad_answer_is_one_line_and_a_usage_error_at_collection(
    pytester: pytest.Pytester, hook: str, said: str
) -> None:
    pytester.makeconftest(hook)
    pytester.makepyfile(test_bad="def test_it(worker): ...\n")
    result, listing = _listing(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    line = f"test_bad.py::test_it: {said}"
    assert listing.keys() == {"usage_error"} and listing["usage_error"].startswith(line)
    errors = [text for text in result.errlines if text.strip()]
    assert len(errors) == 1 and errors[0].startswith(f"ERROR: {line}"), result.errlines
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_bad_answer_runs_nothing(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("def pytest_simpler_device_count(item):\n    return -1\n")
    pytester.makepyfile(test_bad="def test_it():\n    print('THE TEST RAN')\n")
    result = pytester.runpytest_inprocess("-p", "no:xdist", "-s", "--simpler-platform", "a5sim")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "THE TEST RAN" not in result.stdout.str()
    result.stdout.no_fnmatch_line("*passed*")


def test_inactive_the_hooks_are_not_asked_at_collection(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("def pytest_simpler_device_count(item):\n    return 0\n")
    pytester.makepyfile(test_plain="def test_it(): ...\n")
    pytester.runpytest_inprocess("-p", "no:xdist").assert_outcomes(passed=1)


def test_inactive_a_bad_runtime_ends_the_session_when_the_worker_asks(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(RUNNER_CONFTEST + "def pytest_simpler_runtime(item):\n    return 7\n")
    pytester.makepyfile(test_bad="def test_it(worker): ...\ndef test_later(worker): ...\n")
    result = pytester.runpytest_inprocess("-p", "no:xdist")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    said = [text for text in result.outlines if "pytest_simpler_runtime" in text]
    assert len(said) == 1 and "test_bad.py::test_it: pytest_simpler_runtime returned 7" in said[0]


def test_the_listing_line_is_what_simpler_run_says(tmp_path: Path) -> None:
    from simpler.orchestrator.collection import _check_hook_answers

    listed = tmp_path / "listing.json"
    listed.write_text(json.dumps({"usage_error": "t.py::t: pytest_simpler_runtime returned 7"}))
    with pytest.raises(ValueError, match=r"^t.py::t: pytest_simpler_runtime returned 7$"):
        _check_hook_answers(listed)
    listed.write_text("[]")
    _check_hook_answers(listed)


def test_under_xdist_a_bad_answer_stops_with_its_line_not_a_crash(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest("def pytest_simpler_device_count(item):\n    return 0\n")
    pytester.makepyfile(test_bad="def test_it(): ...\ndef test_other(): ...\n")
    result = pytester.runpytest_subprocess("-n", "2", "--simpler-platform", "a5sim")
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output and "Traceback" not in output
    result.stdout.fnmatch_lines(["*simpler: test_bad.py::test_*: pytest_simpler_device_count*"])
    assert result.ret != 0 and "passed" not in output


def test_the_listing_says_which_tests_are_unskippable_under_strict_markers(
    pytester: pytest.Pytester,
) -> None:
    """The marker is simpler's: a --strict-markers suite collects it, and simpler run's
    listing carries it to --affected-since, which then runs the test whatever changed."""
    pytester.makepyfile(
        test_marked="""
        import pytest

        @pytest.mark.unskippable
        def test_always(): ...

        def test_sometimes(): ...
        """
    )
    result, listing = _listing(pytester, "--strict-markers")
    assert result.ret == 0
    assert {e["nodeid"].split("::")[1]: e.get("unskippable") for e in listing} == {
        "test_always": True,
        "test_sometimes": None,
    }
