"""The ``simpler`` command: the table of its commands, the top-level parser, the errors.

Each command lives in a module of its own (COMMANDS), which owns its parser and reads what
it parsed into a typed options class: argparse's Namespace goes no further than that module.
Bad input is one line on stderr and exit 2; an unreadable report is exit 3.
Nothing here imports cppyy: the device runner loads in the pytest processes. A command line
that names its command imports that command's module only (``simpler capacity`` starts fast).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from simpler.usage import OneLineParser, UsageError, one_line_exit

__all__ = ["COMMANDS", "build_parser", "main"]

# Each command's module, in the order --help lists them. Each has HELP, add_parser(commands),
# options(namespace) -> its typed options, and main(options). What follows -- is pytest's
# where PYTEST_ARGS says the command takes it: main(options, pytest_args), pytest_args None
# when the line has no --. Where PARSES_DASHES says so, the -- is the command's parser's
# (argparse's end of options). Every other command refuses what follows --.
COMMANDS = {
    "run": "simpler.commands.run",
    "report": "simpler.commands.report",
    "schedule": "simpler.commands.schedule",
    "capacity": "simpler.commands.capacity",
    "history": "simpler.commands.history",
    "plan": "simpler.commands.plan",
    "lifecycle": "simpler.commands.lifecycle",
    "affected": "simpler.commands.affected",
}


def build_parser(command: str | None = None) -> OneLineParser:
    """The top-level parser, with every command's parser or with ``command``'s only."""
    parser = OneLineParser(prog="simpler", description="Test orchestrator for device test suites.")
    parser.add_argument("--version", action=_PrintVersions)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    for name in COMMANDS if command is None else [command]:
        importlib.import_module(COMMANDS[name]).add_parser(commands)
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
    # Locks, logs, the report, the history database (HistoryUnusable is an InfraError): the
    # machine failed us, not the user.
    return one_line_exit("simpler", lambda: _dispatch(args_list))


def _dispatch(argv: list[str]) -> int:
    # The command named first is the only one whose module loads; a line without one is
    # parsed with every command's parser, for --help, --version or the error that says so.
    name = argv[0] if argv[:1] and argv[0] in COMMANDS else None
    command = importlib.import_module(COMMANDS[name]) if name else None
    if getattr(command, "PARSES_DASHES", False):
        own, pytest_args = argv, None
    else:
        own, pytest_args = _split_pytest_args(argv)
    if name == "run" and pytest_args is not None:
        from simpler.coverage.options import split_cov_args

        # pytest-cov's spellings after -- are simpler's own: no child may see them.
        pytest_args, cov_args = split_cov_args(pytest_args)
        own = [*own, *cov_args]
    namespace = build_parser(name).parse_args(own)
    if command is None:  # not reached: a line that names no command first ends in parse_args
        raise UsageError("simpler: name a command first (see simpler --help)")
    takes_pytest_args = getattr(command, "PYTEST_ARGS", False)
    if pytest_args and not takes_pytest_args:
        raise UsageError(f"simpler {name}: unexpected arguments after --")
    options = command.options(namespace)
    code: int = command.main(options, pytest_args) if takes_pytest_args else command.main(options)
    return code


def _split_pytest_args(argv: list[str]) -> tuple[list[str], list[str] | None]:
    if "--" in argv:
        cut = argv.index("--")
        return argv[:cut], argv[cut + 1 :]
    return argv, None
