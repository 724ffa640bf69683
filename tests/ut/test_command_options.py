"""Each command reads its command line into a typed, frozen options class in its own module,
and its entry takes that, never argparse's Namespace (simpler/cli.py dispatches by table)."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from simpler import cli
from simpler.capacity import command as capacity_command
from simpler.commands import affected, lifecycle, report, run, schedule
from simpler.commands.affected import AffectedCommand
from simpler.commands.lifecycle import LifecycleOptions
from simpler.commands.report import ReportCommand
from simpler.commands.schedule import ScheduleOptions
from simpler.coverage.options import CovRequest
from simpler.fleet import command as plan_command
from simpler.history import command as history_command
from simpler.orchestrator.options import RunOptions

# command line -> (the command's module, the class its options are read into)
PARSED = {
    ("run", "--platform", "a5sim", "--device", "0-1", "--shard", "1/2", "--cov"): (
        run,
        RunOptions,
    ),
    ("report", "--file", "a.jsonl", "--plan", "p.json"): (report, ReportCommand),
    ("schedule", "--devices", "0", "--dry-run", "jobs.json"): (schedule, ScheduleOptions),
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
    assert set(cli.SELF_PARSING) <= set(cli.COMMANDS)


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


# The self-parsing commands: what each one's entry calls with its options, and a command line.
SELF_PARSING: dict[str, tuple[Any, str, type, list[str]]] = {
    "capacity": (capacity_command, "_run", capacity_command.CapacityOptions, ["--registry", "r"]),
    "history": (history_command, "_dispatch", history_command.HistoryOptions, ["flaky"]),
    "plan": (plan_command, "_plan", plan_command.PlanOptions,
             ["--registry", "r", "--runners", "1=cpu", "--jobs", "1=1"]),
}  # fmt: skip


@pytest.mark.parametrize("name", list(SELF_PARSING))
def test_a_self_parsing_commands_body_gets_its_typed_options(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    module, body, kind, argv = SELF_PARSING[name]
    seen: list[object] = []
    fake: Callable[..., int] = lambda options, *rest: seen.append(options) or 0  # noqa: E731
    monkeypatch.setattr(module, body, fake)
    assert cli.main([name, *argv]) == 0
    [options] = seen
    _is_typed(options, kind)
