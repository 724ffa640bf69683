"""Writing the files simpler leaves for users (JUnit XML, the timeline, the history page, the
durations file, a plan): whole, or not at all, with the mode a plain ``open()`` gives them."""

from __future__ import annotations

import errno
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = ["make_parent_dir", "plain_file_mode", "write_atomically"]

_UMASK_LOCK = threading.Lock()  # reading the umask sets it: no other thread may see the 0


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
            # mkstemp's 0600 would hide the file from the user's group and from CI tools.
            os.fchmod(stream.fileno(), plain_file_mode())
            write(stream)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def plain_file_mode() -> int:
    """The mode ``open(path, "w")`` would give a new file: 0666 less the user's umask."""
    with _UMASK_LOCK:
        umask = os.umask(0o077)
        os.umask(umask)
    return 0o666 & ~umask
