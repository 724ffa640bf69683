"""How a run's test quarantine reaches its records: the file the run resolves (refused up
front when unusable), the env every pytest process gets, the marks the plugin adds to the
records of covered tests, and the marks on a Resource child's record."""

from __future__ import annotations

import dataclasses
import os
from datetime import date, timedelta
from pathlib import Path

import pytest

from simpler.contract.child import ChildContract
from simpler.contract.settings import QUARANTINE_ENV
from simpler.orchestrator import resource
from simpler.orchestrator.context import RunContext, RunSetup
from simpler.orchestrator.options import RunOptions
from simpler.orchestrator.quarantine_setup import load_run_quarantine, warn_unmatched
from simpler.plugin.options import PluginSettings
from simpler.plugin.state import write_new
from simpler.reporting import report_file
from simpler.reporting.quarantine_file import QUARANTINE_FILE_NAME
from simpler.reporting.records import LifecycleRecord, PoisonSkipRecord, TestRecord
from simpler.scheduler.jobs import JobResult
from simpler.usage import UsageError

SOON = date.today() + timedelta(days=10)
PAST = date.today() - timedelta(days=3)


def quarantine_text(nodeid: str, expires: date = SOON, extra: str = "") -> str:
    return (
        f'[[quarantine]]\nnodeid = "{nodeid}"\nreason = "flaky"\nowner = "alice"\n'
        f"expires = {expires}\n{extra}"
    )


def settings(report: Path, platform: str = "a5sim") -> PluginSettings:
    """A process's settings, told what this process's environment tells."""
    told = dataclasses.replace(ChildContract.from_env(os.environ), phase="l2")
    return PluginSettings(platform, [0], report, "", True, None, False, told=told)


def records_of(report: Path) -> dict[str, dict[str, object]]:
    return {str(r["nodeid"]): r for r in report_file.read(report) if r.get("type") == "test"}


# --- the plugin's marks --------------------------------------------------------------------


def test_records_of_covered_tests_are_marked_and_keep_their_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "q.toml"
    file.write_text(
        quarantine_text("t.py::TestX")
        + quarantine_text("t.py::old", PAST)
        + quarantine_text("t.py::elsewhere", extra='platforms = ["a2a3sim"]\n')
    )
    monkeypatch.setenv(QUARANTINE_ENV, str(file))
    report = tmp_path / "report.jsonl"
    for nodeid in ("t.py::TestX::test_a", "t.py::TestXY::test_a", "t.py::old", "t.py::elsewhere"):
        write_new(settings(report), TestRecord, nodeid=nodeid, outcome="failed")
    written = records_of(report)
    assert written["t.py::TestX::test_a"]["quarantined"] is True
    assert written["t.py::TestX::test_a"]["outcome"] == "failed"
    assert "quarantined" not in written["t.py::TestXY::test_a"]
    assert written["t.py::old"]["quarantine_expired"] == PAST.isoformat()
    assert "quarantined" not in written["t.py::old"]
    assert "quarantined" not in written["t.py::elsewhere"]  # a2a3sim only; this is a5sim


def test_a_poison_skip_registration_is_marked_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A test never re-run has its registration as its verdict: it must not gate either.
    file = tmp_path / "q.toml"
    file.write_text(quarantine_text("t.py::victim"))
    monkeypatch.setenv(QUARANTINE_ENV, str(file))
    report = tmp_path / "report.jsonl"
    write_new(settings(report), PoisonSkipRecord, nodeid="t.py::victim")
    write_new(settings(report), LifecycleRecord, nodeid="t.py::victim")
    marked = [r.get("quarantined") for r in report_file.read(report)]
    assert marked == [True, None]


def test_the_file_is_read_once_per_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = tmp_path / "q.toml"
    file.write_text(quarantine_text("t.py::a"))
    monkeypatch.setenv(QUARANTINE_ENV, str(file))
    report = tmp_path / "report.jsonl"
    write_new(settings(report), TestRecord, nodeid="t.py::a", outcome="passed")
    file.unlink()  # read again, it would be an error and no mark
    write_new(settings(report), TestRecord, nodeid="t.py::a", outcome="failed")
    assert [r.get("quarantined") for r in report_file.read(report)] == [True, True]


def test_without_a_file_records_are_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(QUARANTINE_ENV, "")
    report = tmp_path / "report.jsonl"
    write_new(settings(report), TestRecord, nodeid="t.py::a", outcome="failed")
    (written,) = report_file.read(report)
    assert "quarantined" not in written and "quarantine_expired" not in written


# --- the orchestrator: which file, checked before anything runs -----------------------------


def test_the_default_file_in_the_project_root_is_used_when_present(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(QUARANTINE_ENV, raising=False)
    assert load_run_quarantine(None, "simpler run") is None
    (tmp_path / QUARANTINE_FILE_NAME).write_text(quarantine_text("t.py::a"))
    loaded = load_run_quarantine(None, "simpler run")
    assert loaded is not None and loaded.path == tmp_path / QUARANTINE_FILE_NAME
    assert loaded.path.is_absolute()  # children run elsewhere: they get the whole path


def test_the_flag_wins_over_the_env_which_wins_over_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in (QUARANTINE_FILE_NAME, "env.toml", "flag.toml"):
        (tmp_path / name).write_text(quarantine_text(f"t.py::{name}"))
    monkeypatch.setenv(QUARANTINE_ENV, "env.toml")
    from_env = load_run_quarantine(None, "simpler run")
    from_flag = load_run_quarantine(Path("flag.toml"), "simpler run")
    assert from_env is not None and from_env.path.name == "env.toml"
    assert from_flag is not None and from_flag.path.name == "flag.toml"


def test_a_named_file_that_is_missing_or_broken_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(QUARANTINE_ENV, raising=False)
    with pytest.raises(UsageError, match=r"^simpler run: --quarantine .*nope.toml: no such"):
        load_run_quarantine(tmp_path / "nope.toml", "simpler run")
    broken = tmp_path / "broken.toml"
    broken.write_text(quarantine_text("t.py::a") + "reason = = 1\n")
    with pytest.raises(UsageError, match=r"^simpler run: quarantine file .*broken.toml:6:"):
        load_run_quarantine(broken, "simpler run")


def test_expired_entries_and_unmatched_ones_are_named_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from simpler.split.listing import SuiteListing

    file = tmp_path / "q.toml"
    file.write_text(quarantine_text("t.py::a") + "\n" + quarantine_text("t.py::gone", PAST))
    loaded = load_run_quarantine(file, "simpler run")
    warn_unmatched(loaded, SuiteListing(l2=["t.py::a[1]"]))
    assert capsys.readouterr().err.splitlines() == [
        f"simpler: quarantine file {file}:7: quarantine of t.py::gone expired on {PAST}: "
        "it gates again",
        f"simpler: quarantine entry t.py::gone ({file}:7) matches no collected test",
    ]


def run_context(tmp_path: Path) -> RunContext:
    file = tmp_path / "q.toml"
    file.write_text(quarantine_text("t.py::two_cards"))
    loaded = load_run_quarantine(file, "simpler run")
    options = RunOptions("a5sim", "0-1", "l2")
    setup = RunSetup(options, [0, 1], tmp_path / "report.jsonl", "run-1", test_quarantine=loaded)
    return RunContext(setup)


def test_every_pytest_process_of_the_run_is_told_the_file(tmp_path: Path) -> None:
    setup = run_context(tmp_path).setup
    retry = setup.child("retry", label="retry-victims-1", attempt=2).to_env()
    assert retry[QUARANTINE_ENV] == str(tmp_path / "q.toml")
    assert setup.child("resource", label="t").to_env()[QUARANTINE_ENV] == str(tmp_path / "q.toml")
    setup = dataclasses.replace(setup, test_quarantine=None)  # and a run without one overrides
    l2 = setup.child("l2", label="L2 pass", devices=[0]).to_env()  # an inherited value
    assert l2[QUARANTINE_ENV] == ""


def test_a_resource_childs_record_is_marked_by_the_orchestrator(tmp_path: Path) -> None:
    ctx = run_context(tmp_path)
    ctx.state.current_phase = "resource"
    for nodeid in ("t.py::two_cards", "t.py::other"):
        resource._finished(ctx, JobResult(nodeid, None, "SIGSEGV", [0, 1], 1.0, nodeid=nodeid))
    marks = {r["nodeid"]: r.get("quarantined") for r in report_file.read(ctx.setup.report)}
    assert marks == {"t.py::two_cards": True, "t.py::other": None}
