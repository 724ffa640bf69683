"""Bad input is one clear line on stderr and exit 2: the parser every command uses."""

from __future__ import annotations

import argparse
import errno
import os
from pathlib import Path
from typing import NoReturn

__all__ = ["EXIT_USAGE", "OneLineParser", "UsageError", "make_parent_dir"]

EXIT_USAGE = 2


class UsageError(Exception):
    """Bad input: one line on stderr, exit 2."""


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One clear line, not argparse's usage block.
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def make_parent_dir(target: Path) -> None:
    """Create ``target``'s folder; a file standing where a folder must be is named as such."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        # mkdir says "File exists" when an ancestor is a file, which misleads: say what it is.
        reason = os.strerror(errno.ENOTDIR)
        raise NotADirectoryError(errno.ENOTDIR, reason, str(target.parent)) from None
