"""Writing the files a run leaves behind (JUnit XML, the timeline): whole, or not at all."""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = ["make_parent_dir", "write_atomically"]


def make_parent_dir(target: Path) -> None:
    """Create ``target``'s folder; a file standing where a folder must be is named as such."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        # mkdir says "File exists" when an ancestor is a file, which misleads: say what it is.
        reason = os.strerror(errno.ENOTDIR)
        raise NotADirectoryError(errno.ENOTDIR, reason, str(target.parent)) from None


def write_atomically(target: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write beside the final name, then rename: a reader never sees half a file, and a
    failed write leaves an earlier file intact. Raises OSError."""
    make_parent_dir(target)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as stream:
            os.fchmod(stream.fileno(), 0o644)  # mkstemp's 0600 would hide it from CI tools
            write(stream)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
