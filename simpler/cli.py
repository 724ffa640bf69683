"""The ``simpler`` command: the table of its commands, the top-level parser, the errors.

Each command lives in a module of its own (COMMANDS), which owns its parser and reads what
it parsed into a typed options class: argparse's Namespace goes no further than that module.
Bad input is one line on stderr and exit 2; an unreadable report is exit 3.
Nothing here imports cppyy: the device runner loads in the pytest processes.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from simpler.coverage.options import split_cov_args
from simpler.history.schema import HistoryUnusable
from simpler.usage import OneLineParser, UsageError, one_line_exit

__all__ = ["COMMANDS", "build_parser", "main"]

# Each command's module, in the order --help lists them. A module this parser parses for has
# HELP, add_parser(commands), options(namespace) -> its typed options, and main(options)
# (main(options, pytest_args) where PYTEST_ARGS says it takes what follows --).
COMMANDS = {
    "run": "simpler.commands.run",
    "report": "simpler.commands.report",
    "schedule": "simpler.commands.schedule",
    "capacity": "simpler.capacity.command",
    "history": "simpler.history.command",
    "plan": "simpler.fleet.command",
    "lifecycle": "simpler.commands.lifecycle",
    "affected": "simpler.commands.affected",
}
# The commands that parse their own command line: main(argv), handed all after their name.
# Their help is said here, so that --help need not import them.
SELF_PARSING = {
    "capacity": "device-count capacity report",
    "history": "flake scores, quarantine, durations",
    "plan": "a CI matrix planned by device size",
}


def build_parser() -> OneLineParser:
    parser = OneLineParser(prog="simpler", description="Test orchestrator for device test suites.")
    parser.add_argument("--version", action=_PrintVersions)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    for name, module in COMMANDS.items():
        if name in SELF_PARSING:
            # Dispatched before parsing (it has its own parser); listed here so --help names it.
            commands.add_parser(name, help=SELF_PARSING[name], add_help=False)
        else:
            importlib.import_module(module).add_parser(commands)
    return parser


class _PrintVersions(argparse.Action):
    """``--version``: simpler's and its dependencies' versions, one line each. argparse's own
    version action would rewrap them into one paragraph."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.setdefault("help", "show the versions a bug report needs and exit")
        super().__init__(option_strings, argparse.SUPPRESS, nargs=0, default=argparse.SUPPRESS,
                         **kwargs)  # fmt: skip

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from simpler.runner.versions import version_lines

        print("\n".join(version_lines()))
        parser.exit()


def main(argv: list[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] and args_list[0] in SELF_PARSING:
        code: int = importlib.import_module(COMMANDS[args_list[0]]).main(args_list[1:])
        return code
    own, pytest_args = _split_pytest_args(args_list)
    # Locks, logs, the report, the history database: the machine failed us, not the user.
    return one_line_exit("simpler", lambda: _dispatch(own, pytest_args), infra=(HistoryUnusable,))


def _dispatch(own: list[str], pytest_args: list[str]) -> int:
    if own[:1] == ["run"]:
        # pytest-cov's spellings after -- are simpler's own: no child may see them.
        pytest_args, cov_args = split_cov_args(pytest_args)
        own = [*own, *cov_args]
    namespace = build_parser().parse_args(own)
    command = importlib.import_module(COMMANDS[namespace.command])
    takes_pytest_args = getattr(command, "PYTEST_ARGS", False)
    if pytest_args and not takes_pytest_args:
        raise UsageError(f"simpler {namespace.command}: unexpected arguments after --")
    options = command.options(namespace)
    code: int = command.main(options, pytest_args) if takes_pytest_args else command.main(options)
    return code


def _split_pytest_args(argv: list[str]) -> tuple[list[str], list[str]]:
    if "--" in argv:
        cut = argv.index("--")
        return argv[:cut], argv[cut + 1 :]
    return argv, []
