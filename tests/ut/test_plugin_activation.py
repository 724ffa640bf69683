"""When the plugin is active: only when asked for (a ``simpler run`` child, a ``--simpler-...``
option, an ini key), and what an inactive session's fixtures still get."""

from __future__ import annotations

import pytest

from simpler.plugin.options import plugin_active, resolve_settings

pytest_plugins = ["pytester"]

DISPATCHER_CONFTEST = """
def pytest_addoption(parser):
    for name in ("--platform", "--device", "--report", "--runtime", "--level", "--case"):
        parser.addoption(name)
    parser.addoption("--max-parallel", type=int)
    parser.addoption("--sim-fault", action="append", default=[])
    parser.addoption("--no-recovery", action="store_true")
    parser.addoption("--class-lines", action="store_true")
"""


@pytest.fixture(autouse=True)
def _outside_simpler(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SIMPLER_PHASE", "SIMPLER_REPORT", "SIMPLER_PLATFORM", "SIMPLER_DEVICES"):
        monkeypatch.delenv(name, raising=False)


def test_a_plain_run_leaves_the_plugin_inactive(pytester: pytest.Pytester) -> None:
    assert not plugin_active(pytester.parseconfig())


def test_the_projects_own_short_options_never_collide(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(DISPATCHER_CONFTEST)
    config = pytester.parseconfig(
        *("--platform", "a5", "--device", "3", "--report", "r", "--max-parallel", "2"),
        *("--sim-fault", "x", "--no-recovery", "--class-lines", "--runtime", "t"),
    )
    assert config.getoption("platform") == "a5"
    assert config.getoption("max_parallel") == 2
    assert not plugin_active(config)  # the project's options are not simpler's


@pytest.mark.parametrize(
    "args",
    [
        ("--simpler-platform", "a2a3sim"),
        ("--simpler-device", "0-1"),
        ("--simpler-report", "r.jsonl"),
        ("--simpler-sim-fault", "force_reset_fail"),
        ("--simpler-max-parallel", "2"),
        ("--simpler-no-recovery",),
        ("--simpler-class-lines",),
        ("--simpler-fail-on-flaky",),
        ("--simpler-retry-role", "victim"),
    ],
)
def test_any_simpler_option_activates_it(pytester: pytest.Pytester, args: tuple[str, ...]) -> None:
    assert plugin_active(pytester.parseconfig(*args))


@pytest.mark.parametrize(
    "ini", ["simpler_platform = a5sim", "simpler_device = 0-3", "simpler_class_lines = true"]
)
def test_an_ini_key_activates_it(pytester: pytest.Pytester, ini: str) -> None:
    pytester.makeini(f"[pytest]\n{ini}\n")
    assert plugin_active(pytester.parseconfig())


def test_a_simpler_run_child_is_active_by_its_env(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIMPLER_PHASE", "resource")
    assert plugin_active(pytester.parseconfig())


def test_the_ini_keys_resolve_like_the_options(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\nsimpler_platform = a2a3sim\nsimpler_device = 2-3\n"
        "simpler_report = out/r.jsonl\nsimpler_class_lines = true\n"
    )
    settings = resolve_settings(pytester.parseconfig())
    assert (settings.platform, settings.devices) == ("a2a3sim", [2, 3])
    assert settings.report == (pytester.path / "out" / "r.jsonl").resolve()
    assert settings.class_lines
    given = resolve_settings(pytester.parseconfig("--simpler-device", "5"))
    assert given.devices == [5]  # the command line wins over the ini


def test_inactive_settings_write_nothing_and_refuse_nothing(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIMPLER_REPORT", str(pytester.path / "r.jsonl"))
    monkeypatch.setenv("SIMPLER_SIM_FAULTS", "not a fault spec")
    settings = resolve_settings(pytester.parseconfig(), active=False)
    assert (settings.platform, settings.devices) == ("a5sim", [0])  # the worker's defaults
    assert settings.report is None and settings.faults == "" and not settings.class_lines


def test_a_run_process_keeps_to_what_the_run_told_it_over_its_addopts(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project's addopts naming other cards never moves a child off the ones the run locked
    for it; outside a run the same option wins over the environment."""
    pytester.makeini("[pytest]\naddopts = --simpler-device 0-1 --simpler-platform a5sim\n")
    monkeypatch.setenv("SIMPLER_DEVICES", "4,5")
    monkeypatch.setenv("SIMPLER_PLATFORM", "a2a3sim")
    assert resolve_settings(pytester.parseconfig()).devices == [0, 1]  # no run: the option
    monkeypatch.setenv("SIMPLER_PHASE", "resource")
    settings = resolve_settings(pytester.parseconfig())
    assert (settings.platform, settings.devices) == ("a2a3sim", [4, 5])
