"""A project's own runtime through the conftest hooks: a fake Python runner, no cppyy."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from pooled_workers import project_worker

from simpler import DeviceRuntimeError
from simpler.plugin.project_runtime import RunnerContractError, runner_factory, translator

pytest_plugins = ["pytester"]

SCENARIO = Path(__file__).resolve().parents[1] / "it" / "scenarios" / "own_runtime"
CONFTEST = (SCENARIO / "scenario_conftest.py").read_text()
SUITE = (SCENARIO / "scenario_own_runtime.py").read_text()
TRIGGER = "test_myhw.py::TestTrigger::test_launch"
VICTIMS = [f"test_myhw.py::TestVictim{i}::test_run" for i in (1, 2, 3)]


@pytest.fixture(autouse=True)
def _outside_simpler(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SIMPLER_PHASE", "SIMPLER_REPORT", "SIMPLER_PLATFORM", "SIMPLER_DEVICES"):
        monkeypatch.delenv(name, raising=False)
    for name in ("MYHW_RESET", "MYHW_TRANSLATE", "SIMPLER_ATTEMPT", "SIMPLER_RUNNER_LIBRARY"):
        monkeypatch.delenv(name, raising=False)


def _run(pytester: pytest.Pytester, suite: str = SUITE) -> tuple[Any, list[dict[str, Any]]]:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_myhw=suite)
    report = pytester.path / "report.jsonl"
    result = pytester.runpytest_inprocess(
        "-p", "no:xdist", "--simpler-platform", "myhw", "--simpler-report", str(report)
    )
    records = (
        [json.loads(line) for line in report.read_text().splitlines()] if report.exists() else []
    )
    return result, records


def _outcomes(records: list[dict[str, Any]]) -> dict[str, str]:
    return {r["nodeid"]: r["outcome"] for r in records if r["type"] == "test"}


def _path(records: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(r["source"], r["dest"], r["trigger"]) for r in records if r["type"] == "lifecycle"]


def test_the_hooks_runner_is_the_workers_runner(pytester: pytest.Pytester) -> None:
    suite = """
def test_uses_it(worker):
    assert type(worker.runner).__name__ == "FakeHwRunner"
    assert worker.runner.runtime == "default" and worker.runner.inited
    assert worker.run("add", 1) == ("add", 1)
    assert worker.run("add", 1, b=2) == ("add", 1, {"b": 2})
"""
    result, records = _run(pytester, suite)
    result.assert_outcomes(passed=1)
    assert _path(records)[0] == ("created", "healthy", "init_ok")


def test_a_translated_error_poisons_and_force_reset_rebuilds_in_place(
    pytester: pytest.Pytester,
) -> None:
    result, records = _run(pytester)
    result.assert_outcomes(passed=3, failed=1)
    outcomes = _outcomes(records)
    assert outcomes[TRIGGER] == "failed"
    assert all(outcomes[v] == "passed" for v in VICTIMS)
    assert _path(records) == [
        ("created", "healthy", "init_ok"),
        ("healthy", "poisoned", "device_error"),
        ("poisoned", "force_reset", "start_force_reset"),
        ("force_reset", "rebuilt", "rebuild_ok"),
        ("rebuilt", "closed", "close"),
    ]
    trigger = next(r for r in records if r["type"] == "test" and r["nodeid"] == TRIGGER)
    assert (trigger["rc"], trigger["where"]) == (507899, "rtMalloc")
    assert trigger["message"] == "RuntimeError: rtMalloc failed with code 507899"
    poisoned = [r for r in records if r["type"] == "lifecycle"][1]
    assert (poisoned["rc"], poisoned["where"], poisoned["nodeid"]) == (507899, "rtMalloc", TRIGGER)


def test_a_force_reset_that_does_not_take_poison_skips_the_rest(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MYHW_RESET", "broken")
    monkeypatch.setenv("SIMPLER_RESET_ATTEMPTS", "2")
    result, records = _run(pytester)
    result.assert_outcomes(failed=1, skipped=3)
    skips = [r for r in records if r["type"] == "poison_skip"]
    assert {r["nodeid"] for r in skips} == set(VICTIMS)
    path = _path(records)
    assert ("force_reset", "force_reset", "reset_retry") in path
    give_up = [r for r in records if r["type"] == "lifecycle" and r["trigger"] == "give_up"]
    assert [(r["rc"], r["where"]) for r in give_up] == [(507033, "rtDeviceReset")]
    assert {r["device"] for r in skips} == {r["device"] for r in give_up}  # the worker's card


def test_a_translator_that_raises_leaves_the_error_and_is_reported_once(
    capfd: pytest.CaptureFixture[str],
) -> None:
    original = RuntimeError("rtMalloc failed with code 507899")

    def broken(error: BaseException) -> None:
        raise ValueError("translator broken")

    config = cast(
        pytest.Config, SimpleNamespace(hook=SimpleNamespace(pytest_simpler_device_error=broken))
    )
    translate = translator(config)
    assert translate(original) is original
    assert isinstance(translate(RuntimeError("again")), RuntimeError)
    said = [line for line in capfd.readouterr().err.splitlines() if "raised" in line]
    assert said == [
        "simpler: pytest_simpler_device_error raised ValueError('translator broken'); "
        "the original errors stand untranslated (reported once)"
    ]


def test_a_device_runtime_error_needs_no_translation() -> None:
    def never(error: BaseException) -> None:
        raise AssertionError("not asked")

    config = cast(
        pytest.Config, SimpleNamespace(hook=SimpleNamespace(pytest_simpler_device_error=never))
    )
    error = DeviceRuntimeError(1, "x", "y", device=0, platform="myhw")
    assert translator(config)(error) is error
    assert translator(config)(None) is None


def test_a_raising_translator_in_a_run_still_heals_by_probe(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MYHW_TRANSLATE", "raise")
    result, records = _run(pytester)
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*RuntimeError: rtMalloc failed with code 507899*"])
    assert result.stdout.str().count("pytest_simpler_device_error raised") == 1
    assert ("healthy", "poisoned", "device_error") in _path(records)


class _Incomplete:
    def init(self) -> None: ...

    def run(self) -> None: ...


def test_a_runner_missing_methods_is_one_line_naming_them() -> None:
    config = cast(
        pytest.Config,
        SimpleNamespace(
            hook=SimpleNamespace(pytest_simpler_create_runner=lambda **_: _Incomplete())
        ),
    )
    with pytest.raises(RunnerContractError) as caught:
        runner_factory(config, "default")("myhw", 0)
    message = str(caught.value)
    assert "\n" not in message
    assert "without probe, force_reset, finalize, close, unusable" in message


def test_a_runner_missing_methods_ends_the_session_as_a_usage_error(
    pytester: pytest.Pytester,
) -> None:
    conftest = """
class Incomplete:
    def init(self): ...
def pytest_simpler_create_runner(platform, runtime, device):
    return Incomplete()
"""
    pytester.makeconftest(conftest)
    pytester.makepyfile(test_one="def test_it(worker):\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "no:xdist", "--simpler-platform", "myhw")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["*simpler: pytest_simpler_create_runner returned a Incomplete*"])


class _FlakyInit:
    """A project's runner whose first init fails with the project's own exception."""

    inits = 0
    unusable = False

    def init(self) -> None:
        _FlakyInit.inits += 1
        if _FlakyInit.inits == 1:
            raise RuntimeError("halResMap failed with code 62")

    def probe(self) -> bool:
        return True

    def force_reset(self) -> None: ...

    def finalize(self) -> int:
        return 0

    def close(self) -> None: ...


def test_a_project_init_failure_is_translated_and_healed_by_the_lifecycle() -> None:
    def translate(error: BaseException | None) -> BaseException | None:
        if isinstance(error, RuntimeError) and "code 62" in str(error):
            return DeviceRuntimeError(62, "halResMap", str(error), device=0, platform="myhw")
        return error

    records: list[dict[str, Any]] = []
    worker = project_worker(records, _FlakyInit, translate=translate)
    assert worker.state == "rebuilt" and isinstance(worker.runner, _FlakyInit)
    assert [(r["dest"], r["rc"]) for r in records][:2] == [("poisoned", 62), ("force_reset", None)]
