"""Each command reads its command line into a typed, frozen options class in its own module,
and its entry takes that, never argparse's Namespace (simpler/cli.py dispatches by table)."""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from simpler import cli
from simpler.capacity import report as capacity_report
from simpler.capacity.options import CapacityOptions
from simpler.commands import affected, capacity, history, lifecycle, plan, report, run, schedule
from simpler.commands.affected import AffectedCommand
from simpler.commands.lifecycle import LifecycleOptions
from simpler.commands.report import ReportCommand
from simpler.commands.schedule import ScheduleOptions
from simpler.coverage.options import CovRequest
from simpler.fleet import matrix as plan_matrix
from simpler.fleet.options import PlanOptions
from simpler.history import subcommands as history_subcommands
from simpler.history.options import HistoryOptions
from simpler.orchestrator.options import RunOptions

# command line -> (the command's module, the class its options are read into)
PARSED = {
    ("run", "--platform", "a5sim", "--device", "0-1", "--shard", "1/2", "--cov"): (
        run,
        RunOptions,
    ),
    ("report", "--file", "a.jsonl", "--plan", "p.json"): (report, ReportCommand),
    ("schedule", "--devices", "0", "--dry-run", "jobs.json"): (schedule, ScheduleOptions),
    ("capacity", "--registry", "r"): (capacity, CapacityOptions),
    ("history", "flaky"): (history, HistoryOptions),
    ("plan", "--registry", "r", "--runners", "1=cpu", "--jobs", "1=1"): (plan, PlanOptions),
    ("lifecycle", "--mermaid"): (lifecycle, LifecycleOptions),
    ("affected", "origin/main", "--format", "json"): (affected, AffectedCommand),
}


def _is_typed(options: object, kind: type) -> None:
    assert isinstance(options, kind) and not isinstance(options, argparse.Namespace)
    assert dataclasses.is_dataclass(options)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(options, dataclasses.fields(options)[0].name, None)


def test_the_table_names_every_command_in_the_order_help_lists_them() -> None:
    assert list(cli.COMMANDS) == [
        "run", "report", "schedule", "capacity", "history", "plan", "lifecycle", "affected",
    ]  # fmt: skip
    assert all(module.startswith("simpler.commands.") for module in cli.COMMANDS.values())


@pytest.mark.parametrize("argv", list(PARSED), ids=lambda argv: argv[0])
def test_a_parsed_commands_options_are_built_from_its_parser(argv: tuple[str, ...]) -> None:
    module, kind = PARSED[argv]
    namespace = cli.build_parser().parse_args(list(argv))
    _is_typed(module.options(namespace), kind)


@pytest.mark.parametrize("argv", list(PARSED), ids=lambda argv: argv[0])
def test_a_parsed_commands_entry_gets_its_typed_options(
    argv: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    module, kind = PARSED[argv]
    seen: list[object] = []
    monkeypatch.setattr(module, "main", lambda options, *rest: seen.append(options) or 0)
    assert cli.main(list(argv)) == 0
    [options] = seen
    _is_typed(options, kind)


def test_the_run_options_say_what_was_typed_and_the_plan_of_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SIMPLER_PLAN", "plan.json")
    monkeypatch.setenv("SIMPLER_JOB", "gpu-2-1")
    argv = ["run", "--platform", "a5sim", "--device", "0", "--cov=src", "--cov-branch"]
    options = run.options(cli.build_parser().parse_args(argv))
    assert (options.platform, options.device, options.plan, options.job) == (
        "a5sim", "0", Path("plan.json"), "gpu-2-1",
    )  # fmt: skip
    assert options.coverage == CovRequest(cov=("src",), cov_branch=True)


# The commands whose body lives in its package: what each one's entry calls with its options,
# and a command line.
IN_PACKAGE: dict[str, tuple[Any, str, type, list[str]]] = {
    "capacity": (capacity_report, "print_report", CapacityOptions, ["--registry", "r"]),
    "history": (history_subcommands, "run_subcommand", HistoryOptions, ["flaky"]),
    "plan": (plan_matrix, "print_matrix", PlanOptions,
             ["--registry", "r", "--runners", "1=cpu", "--jobs", "1=1"]),
}  # fmt: skip


@pytest.mark.parametrize("name", list(IN_PACKAGE))
def test_a_commands_body_in_its_package_gets_its_typed_options(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    module, body, kind, argv = IN_PACKAGE[name]
    seen: list[object] = []
    fake: Callable[..., int] = lambda options, *rest: seen.append(options) or 0  # noqa: E731
    monkeypatch.setattr(module, body, fake)
    assert cli.main([name, *argv]) == 0
    [options] = seen
    _is_typed(options, kind)


def test_a_command_line_loads_its_own_commands_module_only(tmp_path: Path) -> None:
    registry = tmp_path / "registry.json"
    registry.write_text("[]")
    script = (
        "import sys\n"
        "from simpler.cli import main\n"
        f"assert main(['capacity', '--registry', {str(registry)!r}]) == 0\n"
        "print(sorted(m for m in sys.modules if m.startswith('simpler.commands')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.splitlines()[-1] == "['simpler.commands', 'simpler.commands.capacity']"


@pytest.mark.parametrize(
    ("tail", "pytest_args"), [([], None), (["--"], []), (["--", "tests/st"], ["tests/st"])]
)
def test_what_follows_dashes_reaches_the_entry_and_none_without_them(
    tail: list[str], pytest_args: list[str] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[object] = []
    monkeypatch.setattr(plan, "main", lambda options, rest: seen.append(rest) or 0)
    assert cli.main(["plan", "--runners", "1=cpu", "--jobs", "1=1", *tail]) == 0
    assert seen == [pytest_args]


def test_dashes_are_the_parsers_where_the_command_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[HistoryOptions] = []
    monkeypatch.setattr(history, "main", lambda options: seen.append(options) or 0)
    assert cli.main(["history", "show", "--", "-x.py::t"]) == 0  # a NODEID that looks like a flag
    assert [options.nodeid for options in seen] == ["-x.py::t"]


@pytest.mark.parametrize("name", ["capacity", "history", "plan"])
def test_what_a_command_does_not_know_is_named_by_the_command(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = {"history": ["flaky"], "plan": ["--runners", "1=cpu", "--jobs", "1=1"]}.get(name, [])
    assert cli.main([name, *argv, "--bogus"]) == 2
    assert capsys.readouterr().err == (
        f"error: simpler {name}: unrecognized arguments: --bogus (see simpler {name} --help)\n"
    )
