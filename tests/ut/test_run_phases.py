"""The phase loop: a usage error or a crash in one phase never suppresses the summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from simpler.orchestrator import run as run_module
from simpler.orchestrator.context import RunContext
from simpler.reporting import report_file


def _context(tmp_path: Path) -> RunContext:
    return RunContext(platform="a5sim", devices=[0], report=tmp_path / "r.jsonl", run_id="r1")


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
        for r in report_file.read(ctx.report)
        if r["type"] == "phase" and r["phase"] == "resource" and r["event"] == "end"
    ]
    assert end[0]["returncode"] == 3 and end[0]["error"] == "ValueError: boom"


def test_without_a_report_phase_the_worst_phase_decides(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _phases(monkeypatch, l2=1)
    assert run_module.run_phases(_context(tmp_path), ["l2", "resource"]) == 1
