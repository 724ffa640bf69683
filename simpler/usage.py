"""Bad input is one clear line on stderr and exit 2: the parser every command uses."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import NoReturn

__all__ = ["OneLineParser", "UsageError", "positive_int", "positive_number"]


class UsageError(Exception):
    """Bad input: one line on stderr, exit 2."""


class OneLineParser(argparse.ArgumentParser):
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
