"""What pytest's own parser makes of each argument on a pytest command line.

The up-front collection child (``--simpler-args FILE``) asks pytest's parser, with every
plugin and initial conftest loaded, and writes one entry per argument and its values:
``{"start", "args", "calls"}``, ``calls`` the ``(dest, values)`` argparse applied; a test
path is ``file_or_dir`` (docs/architecture.md, "What pytest's parser makes of the arguments").
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import pytest

from simpler.contract import USAGE_ERROR_KEY
from simpler.plugin.options import FORK_CHILDREN_INI
from simpler.plugin.project_binding import binding_problem
from simpler.plugin.project_runtime import has_runner_hook

__all__ = ["FILE_OR_DIR", "describe_args", "write_arg_description"]

FILE_OR_DIR = "file_or_dir"  # pytest's name for its positional arguments: the selection
_SEEN = "_simpler_seen"  # where the mirror notes what it applied


class _Arg(str):
    """An argument that knows its position, so a value argparse consumed leads back to it."""

    position: int

    def __new__(cls, text: str, position: int) -> _Arg:
        arg = super().__new__(cls, text)
        arg.position = position
        return arg


class _Seen(argparse.Action):
    """Notes the option argparse applied, with its values untouched, instead of storing it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        getattr(namespace, _SEEN).append((self.dest, values))


class _Refused(Exception):
    pass


class _Mirror(argparse.ArgumentParser):
    """pytest's options with pytest's arities; each one records instead of storing."""

    def __init__(self, options: list[argparse.Action]) -> None:
        super().__init__(add_help=False, allow_abbrev=False)  # pytest allows no abbreviations
        for option in options:
            self.add_argument(
                *option.option_strings, dest=option.dest, nargs=option.nargs, action=_Seen
            )

    def error(self, message: str) -> NoReturn:
        raise _Refused(message)

    def applied(self, args: Sequence[str]) -> list[tuple[str, list[str]]]:
        """The options these arguments apply, in order, each with its values."""
        namespace = argparse.Namespace(**{_SEEN: []})
        self.parse_known_args(list(args), namespace)
        return [(dest, _as_list(values)) for dest, values in getattr(namespace, _SEEN)]


def _as_list(values: Any) -> list[str]:
    if values is None:
        return []
    return list(values) if isinstance(values, list) else [values]


def _pytest_options(config: pytest.Config) -> list[argparse.Action] | None:
    """Every option pytest's parser knows (core, plugins, initial conftests), or None.

    pytest has no public way to ask what an argument is. ``Config._parser.optparser`` is the
    argparse parser it read the command line with (pytest 8 and 9), and ``_actions`` is
    argparse's list of its options. None where a pytest version hides them: then nothing is
    described, and simpler refuses to forward what it cannot tell apart rather than guess.
    """
    optparser = getattr(getattr(config, "_parser", None), "optparser", None)
    actions = getattr(optparser, "_actions", None)
    if not isinstance(optparser, argparse.ArgumentParser) or not isinstance(actions, list):
        return None
    return [action for action in actions if action.option_strings]


def describe_args(config: pytest.Config, args: Sequence[str]) -> dict[str, Any] | None:
    """What pytest's parser makes of ``args``: an entry per argument (with its values).

    ``xdist`` says whether pytest-xdist's options are known here, so that ``-n 0`` parses.
    """
    options = _pytest_options(config)
    if options is None:
        return None
    mirror = _Mirror(options)
    tagged = [_Arg(text, index) for index, text in enumerate(args)]
    # argparse's rule: after a bare ``--`` every argument is positional, and goes with it.
    cut = args.index("--") if "--" in args else len(args)
    try:
        consumed = {
            value.position
            for _, values in mirror.applied(tagged[:cut])
            for value in values
            if isinstance(value, _Arg)
        }
    except _Refused:
        return None
    entries: list[dict[str, Any]] = []
    start = 0
    while start < cut:
        stop = start + 1
        while stop < cut and stop in consumed:
            stop += 1
        entries.append(_entry(mirror, tagged[start:stop]))
        start = stop
    entries += [_entry(mirror, [arg], positional=True) for arg in tagged[cut:]]
    xdist = any(option.dest == "numprocesses" for option in options)
    return {"xdist": xdist, "args": entries}


def _entry(mirror: _Mirror, group: list[_Arg], *, positional: bool = False) -> dict[str, Any]:
    """One argument and the values it took: the options it applied, or a test it selected."""
    first = group[0]
    calls: list[tuple[str, list[str]]]
    if positional or not first.startswith("-") or first == "-":
        calls = [(FILE_OR_DIR, [] if first == "--" else [str(first)])]
    else:
        try:
            calls = mirror.applied(group)
        except _Refused:
            calls = []
    return {
        "start": first.position,
        "args": [str(arg) for arg in group],
        "calls": [[dest, [str(value) for value in values]] for dest, values in calls],
    }


def write_arg_description(config: pytest.Config, target: Path) -> None:
    """Describe this process's own command line (without the ini's addopts) into ``target``."""
    described = describe_args(config, [str(arg) for arg in config.invocation_params.args])
    description = {"schema": 1, **(described or {"xdist": None, "args": None})}
    # Whether a conftest or plugin provides a project's runner: the CLI cannot see hooks.
    description["runner_hook"] = has_runner_hook(config)
    # -x or --maxfail N, given or in the project's addopts: the session stops at the Nth
    # failure in pytest's order, which only one process keeps.
    description["maxfail"] = int(getattr(config.option, "maxfail", 0) or 0)
    # Whether the project lets simpler fork its children from a warm process (its ini).
    description["fork_children"] = bool(config.getini(FORK_CHILDREN_INI))
    # A project's options, worker fixture or loop that simpler cannot bind: one line.
    description[USAGE_ERROR_KEY] = binding_problem(config)
    target.write_text(json.dumps(description))
