"""Bad input is one clear line on stderr and exit 2: the parser every command uses."""

from __future__ import annotations

import argparse
from typing import NoReturn

__all__ = ["OneLineParser", "UsageError"]


class UsageError(Exception):
    """Bad input: one line on stderr, exit 2."""


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One clear line, not argparse's usage block.
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")
