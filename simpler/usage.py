"""Bad input is one clear line on stderr and exit 2: the parser every command uses, and the
guard around every command's body that turns what it raises into one line and an exit code."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from simpler.contract import EXIT_INFRA, EXIT_USAGE

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    Options = TypeVar("Options", bound=DataclassInstance)

__all__ = [
    "InfraError",
    "OneLineParser",
    "UsageError",
    "one_line_exit",
    "options_of",
    "positive_int",
    "positive_number",
]

Errors = tuple[type[BaseException], ...]


class UsageError(Exception):
    """Bad input: one line on stderr, exit 2."""


class InfraError(Exception):
    """Not the user's input: what simpler drives failed (pytest stopped with an internal
    error): one line on stderr, exit 3."""


class OneLineParser(argparse.ArgumentParser):
    """argparse's parser, its errors one line. A command's parser made with
    ``refuses_unknown=True`` refuses what it does not know itself, naming the command
    (``simpler history: unrecognized arguments: ...``), where argparse would leave that to
    the top-level parser, which names only ``simpler``."""

    def __init__(self, *args: Any, refuses_unknown: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.refuses_unknown = refuses_unknown

    def parse_known_args(  # type: ignore[override]  # argparse's three overloads, as one
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, unknown = super().parse_known_args(args, namespace)
        if unknown and self.refuses_unknown:
            self.error(f"unrecognized arguments: {' '.join(unknown)}")
        return parsed, unknown

    def error(self, message: str) -> NoReturn:
        # One clear line, not argparse's usage block.
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def positive_int(text: str) -> int:
    """An argparse ``type``: a whole number of at least 1, in plain ASCII digits."""
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def positive_number(unit: str) -> Callable[[str], float]:
    """An argparse ``type``: a finite number above 0 of ``unit`` (days, minutes)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not 0 < value < float("inf"):
            raise argparse.ArgumentTypeError(f"expected a positive number of {unit}, got {text!r}")
        return value

    return parse


def options_of(kind: type[Options], namespace: argparse.Namespace, **typed: object) -> Options:
    """A command's typed options (a frozen dataclass) from what its parser parsed: each field
    the value of its name, or ``typed``'s where the command converts it; a field the parser
    has not (another subcommand's) keeps its default."""
    parsed = {
        field.name: getattr(namespace, field.name)
        for field in dataclasses.fields(kind)
        if hasattr(namespace, field.name)
    }
    return kind(**{**parsed, **typed})


def one_line_exit(
    prog: str, body: Callable[[], int], *, usage: Errors = (), infra: Errors = ()
) -> int:
    """``body``'s exit code; what it raises is one line on stderr, never a traceback: bad
    input (UsageError and ``usage``) exit 2; the machine, a file or a database failing us
    (OSError and ``infra``) exit 3; anything else is a bug in simpler, exit 3."""
    try:
        return body()
    except Exception as error:
        if isinstance(error, (UsageError, *usage)):
            print(f"error: {_named(prog, error)}", file=sys.stderr)
            return EXIT_USAGE
        if isinstance(error, (OSError, InfraError, *infra)):
            print(f"error: {_named(prog, error)}", file=sys.stderr)
        else:
            print(f"error: {prog} failed: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_INFRA


def _named(prog: str, error: BaseException) -> str:
    """The message, naming the command unless it already does (a parser's errors do)."""
    text = str(error)
    return text if text.startswith("simpler") else f"{prog}: {text}"
