"""What ``simpler run`` tells each pytest process: one typed contract, one way through the
environment, and the only place (with the user settings) that names its variables."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from simpler.contract.child import (
    ChildContract,
    ChildCoverage,
    ChildDeadline,
    devices_value,
    run_wide_env,
    started_by_run,
)
from simpler.orchestrator.context import RunSetup
from simpler.orchestrator.options import RunOptions

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "simpler" / "contract"

FULL = ChildContract(
    run_id="20261204T185431-3fa9c2",
    phase="retry",
    attempt=3,
    platform="a2a3sim",
    devices="4,5",
    report="/ci/.simpler/report.jsonl",
    quarantine="/ci/simpler-quarantine.toml",
    coverage=ChildCoverage("retry t.py::a #3", '{"run:branch": true}', context="test"),
    deadline=ChildDeadline(1764873271.25, "/ci/.simpler/durations.json"),
)


def test_a_contract_survives_the_environment() -> None:
    assert ChildContract.from_env(FULL.to_env()) == FULL
    controller = ChildContract(
        phase="l2", coverage=ChildCoverage("L2 pass", "{}", workers_only=True)
    )
    assert ChildContract.from_env(controller.to_env()) == controller
    told_none = ChildContract(phase="l2", quarantine="")  # a run without a quarantine file
    assert ChildContract.from_env(told_none.to_env()) == told_none


def test_what_is_not_told_is_not_written() -> None:
    assert ChildContract().to_env() == {}
    assert ChildContract(platform="cuda").to_env() == {"SIMPLER_PLATFORM": "cuda"}
    assert ChildContract.from_env({}) == ChildContract()


def test_the_variables_are_the_documented_ones() -> None:
    env = FULL.to_env()
    assert {name: env[name] for name in env if not name.startswith("COVERAGE_")} == {
        "SIMPLER_RUN_ID": "20261204T185431-3fa9c2",
        "SIMPLER_PHASE": "retry",
        "SIMPLER_ATTEMPT": "3",
        "SIMPLER_PLATFORM": "a2a3sim",
        "SIMPLER_DEVICES": "4,5",
        "SIMPLER_REPORT": "/ci/.simpler/report.jsonl",
        "SIMPLER_QUARANTINE": "/ci/simpler-quarantine.toml",
        "SIMPLER_COV_LABEL": "retry t.py::a #3",
        "SIMPLER_COV_CONTEXT": "test",
        "SIMPLER_DEADLINE_AT": "1764873271.250",
        "SIMPLER_DURATIONS": "/ci/.simpler/durations.json",
    }
    assert env["COVERAGE_PROCESS_CONFIG"] == '{"run:branch": true}'


def test_variables_the_contract_does_not_know_are_ignored() -> None:
    environ = {"SIMPLER_JOBS": "4", "SIMPLER_SOMETHING_NEW": "x", "PATH": "/bin"}
    assert ChildContract.from_env(environ) == ChildContract()
    assert ChildContract.from_env({**FULL.to_env(), **environ}) == FULL


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("SIMPLER_ATTEMPT", "two", "SIMPLER_ATTEMPT must be a positive integer, got 'two'"),
        ("SIMPLER_ATTEMPT", "0", "SIMPLER_ATTEMPT must be a positive integer, got '0'"),
        ("SIMPLER_PHASE", "report", "SIMPLER_PHASE must be one of l2, resource, retry, got"),
        ("SIMPLER_DEADLINE_AT", "soon", "SIMPLER_DEADLINE_AT must be epoch seconds, got 'soon'"),
    ],
)
def test_a_bad_value_is_an_error_that_names_its_variable(
    name: str, value: str, message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        ChildContract.from_env({**FULL.to_env(), name: value})


def test_a_run_process_is_known_by_its_phase_without_reading_the_rest() -> None:
    assert started_by_run({"SIMPLER_PHASE": "l2", "SIMPLER_ATTEMPT": "bad"})
    assert not started_by_run({"SIMPLER_PHASE": ""})


def test_a_placed_process_is_told_its_devices_or_none() -> None:
    assert devices_value([4, 5]) == "4,5"
    assert devices_value([]) == "none"


def test_the_warm_process_keeps_only_what_the_whole_run_shares() -> None:
    shared = run_wide_env({**FULL.to_env(), "PATH": "/bin"})
    assert ChildContract.from_env(shared) == ChildContract(
        run_id=FULL.run_id,
        platform=FULL.platform,
        report=FULL.report,
        quarantine=FULL.quarantine,
        deadline=FULL.deadline,
    )
    assert shared["PATH"] == "/bin"


def test_what_the_run_tells_each_of_its_processes(tmp_path: Path) -> None:
    setup = RunSetup(RunOptions("a5sim", "0-1", "l2"), [0, 1], tmp_path / "r.jsonl", "run-7")
    l2 = setup.child("l2", label="L2 pass", devices=setup.devices, deadline=True)
    assert l2 == ChildContract(
        run_id="run-7", phase="l2", attempt=1, platform="a5sim", devices="0,1",
        report=str(tmp_path / "r.jsonl"), quarantine="",
    )  # fmt: skip
    retry = setup.child("retry", label="retry-victims-1", attempt=2)
    assert (retry.phase, retry.attempt, retry.devices) == ("retry", 2, "")  # the scheduler's


def test_the_contract_package_imports_nothing_else_of_simpler() -> None:
    """It sits lowest (the noxfile loads its __init__ by path): it names, it depends on nothing."""
    imported: set[str] = set()
    for path in CONTRACT.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
    assert {m for m in imported if m.split(".")[0] in ("simpler", "recovery")} <= {
        "simpler.contract",
        "simpler.contract.settings",
    }


def _runner_macros() -> set[str]:
    """The C macros of runner.h and the cards' headers: names of C, not of the environment."""
    headers = (ROOT / "simpler" / "runner").rglob("*.h")
    return {m for h in headers for m in re.findall(r"#define\s+(SIMPLER_\w+)", h.read_text())}


def _docstrings(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = body[0] if body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def test_no_environment_variable_is_named_outside_the_contract() -> None:
    """A ``SIMPLER_*`` variable is named in contract/child.py or contract/settings.py only; a
    docstring or a comment may mention one."""
    macros = _runner_macros()
    named: list[str] = []
    for path in sorted((ROOT / "simpler").rglob("*.py")):
        if CONTRACT in path.parents:
            continue
        tree = ast.parse(path.read_text())
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            if id(node) in docstrings or node.value in macros:
                continue
            if "SIMPLER_" in node.value:
                named.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value[:60]!r}")
    assert named == []
