"""The phase loop: a usage error or a crash in one phase never suppresses the summary."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from simpler.orchestrator import run as run_module
from simpler.orchestrator.context import RunContext, RunSetup
from simpler.orchestrator.options import RunOptions
from simpler.orchestrator.report_phase import report_phase
from simpler.orchestrator.signals import Interrupted
from simpler.reporting import report_file
from simpler.reporting.records import TestRecord
from simpler.split.listing import ResourceTest


def _context(tmp_path: Path, *, options: RunOptions | None = None, **setup: Any) -> RunContext:
    options = options or RunOptions("a5sim", "0", "l2")
    return RunContext(RunSetup(options, [0], tmp_path / "r.jsonl", "r1", **setup))


def _phases(monkeypatch: pytest.MonkeyPatch, **behaviour: object) -> list[str]:
    ran: list[str] = []

    def make(name: str, outcome: object):  # type: ignore[no-untyped-def]
        def phase(ctx: RunContext) -> int:
            ran.append(name)
            if isinstance(outcome, Exception):
                raise outcome
            return int(outcome)  # type: ignore[call-overload]

        return phase

    table = {name: make(name, behaviour.get(name, 0)) for name in run_module.PHASES}
    monkeypatch.setattr(run_module, "PHASES", table)
    return ran


def test_a_usage_error_skips_the_test_phases_left_but_not_the_report(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ran = _phases(monkeypatch, l2=2, report=1)
    code = run_module.run_phases(_context(tmp_path), ["l2", "resource", "retry", "report"])
    assert ran == ["l2", "report"]
    assert code == 2


def test_a_crash_inside_a_phase_is_one_line_exit_3_and_the_later_phases_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _phases(monkeypatch, resource=ValueError("boom"))
    ctx = _context(tmp_path)
    code = run_module.run_phases(ctx, ["l2", "resource", "retry", "report"])
    assert ran == ["l2", "resource", "retry", "report"]
    assert code == 3
    err = capsys.readouterr().err
    assert err.strip() == "simpler: phase resource failed inside simpler: ValueError: boom"
    end = [
        r
        for r in report_file.read(ctx.setup.report)
        if r["type"] == "phase" and r["phase"] == "resource" and r["event"] == "end"
    ]
    assert end[0]["returncode"] == 3 and end[0]["error"] == "ValueError: boom"


def test_without_a_report_phase_the_worst_phase_decides(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _phases(monkeypatch, l2=1)
    assert run_module.run_phases(_context(tmp_path), ["l2", "resource"]) == 1


def _last_line(text: str) -> str:
    return text.rstrip("\n").splitlines()[-1]


def test_the_report_is_told_the_runs_exit_code_and_its_verdict_line_says_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # pytest refused the L2 args (a usage error): the run returns 2, and so says the summary.
    _phases(monkeypatch, l2=2)
    monkeypatch.setitem(run_module.PHASES, "report", report_phase)
    code = run_module.run_phases(_context(tmp_path), ["l2", "report"])
    assert code == 2
    assert _last_line(capsys.readouterr().out) == (
        "simpler: 0 passed, 0 recovered, 0 flaky, 1 failed -> exit 2 (usage error in phase l2)"
    )


def test_an_interrupted_run_counts_its_planned_tests_as_not_run_and_no_test_as_failed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    planned = [f"tests/st/test_a.py::test_{i}" for i in range(4)]

    def l2(ctx: RunContext) -> int:
        ctx.write(ctx.record(TestRecord, nodeid=planned[0], outcome="passed", attempt=1))
        raise Interrupted(signal.SIGINT)

    _phases(monkeypatch)
    monkeypatch.setitem(run_module.PHASES, "l2", l2)
    monkeypatch.setitem(run_module.PHASES, "report", report_phase)
    ctx = _context(tmp_path, l2_tests=planned, resource_tests=[])
    code = run_module.run_phases(ctx, ["l2", "resource", "report"])
    out = capsys.readouterr().out
    assert code == 130
    assert _last_line(out) == (
        "simpler: 1 passed, 0 recovered, 0 flaky, 0 failed, 3 not run "
        "-> exit 130 (interrupted by SIGINT)"
    )
    assert "*** 3 planned test(s) not run (l2: interrupted by SIGINT) ***" in out


def test_a_phase_with_nothing_to_do_is_green_even_under_fail_if_nothing_ran(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _phases(monkeypatch)
    monkeypatch.setitem(run_module.PHASES, "report", report_phase)
    options = RunOptions("a5sim", "0", "resource,report", fail_if_nothing_ran=True)
    ctx = _context(tmp_path, options=options, l2_tests=["tests/st/test_a.py::t"], resource_tests=[])
    assert run_module.run_phases(ctx, ["resource", "report"]) == 0
    assert _last_line(capsys.readouterr().out) == (
        "simpler: nothing to run in phase(s) resource -> exit 0"
    )


def test_a_sigint_between_l2_and_resource_counts_the_resource_tests_as_not_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    l2_tests = [f"tests/st/test_a.py::test_{i}" for i in range(2)]

    def l2(ctx: RunContext) -> int:
        for nodeid in l2_tests:
            ctx.write(ctx.record(TestRecord, nodeid=nodeid, outcome="passed", attempt=1))
        return 0

    bracketed = run_module._bracketed

    def signal_before_resource(ctx: RunContext, name: str, phase: object) -> int:
        if name == "resource":  # the signal lands after L2's end record, before Resource's start
            raise Interrupted(signal.SIGINT)
        return bracketed(ctx, name, phase)  # type: ignore[arg-type]

    _phases(monkeypatch)
    monkeypatch.setitem(run_module.PHASES, "l2", l2)
    monkeypatch.setitem(run_module.PHASES, "report", report_phase)
    monkeypatch.setattr(run_module, "_bracketed", signal_before_resource)
    resource = [ResourceTest(f"tests/st/test_m.py::test_{i}", 2, None, None) for i in range(3)]
    ctx = _context(tmp_path, l2_tests=l2_tests, resource_tests=resource)
    code = run_module.run_phases(ctx, ["l2", "resource", "retry", "report"])
    out = capsys.readouterr().out
    assert code == 130
    assert _last_line(out) == (
        "simpler: 2 passed, 0 recovered, 0 flaky, 0 failed, 3 not run "
        "-> exit 130 (interrupted by SIGINT)"
    )
    assert "resource: not started (interrupted by SIGINT)" in out
