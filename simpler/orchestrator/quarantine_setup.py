"""The run's test quarantine: which file, loaded before anything runs, and what it reaches.

``--quarantine F``, else ``$SIMPLER_QUARANTINE``, else ``simpler-quarantine.toml`` where the
run starts; a file that cannot be used is a usage error. Every pytest process of the run is
told the resolved path (docs/quarantine.md).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from simpler.contract.settings import QUARANTINE_ENV
from simpler.reporting.quarantine_file import (
    QUARANTINE_FILE_NAME,
    QuarantineFile,
    QuarantineFileError,
    load_quarantine,
)
from simpler.usage import UsageError

if TYPE_CHECKING:
    from simpler.split.listing import SuiteListing

__all__ = ["load_run_quarantine", "quarantine_env", "warn_unmatched"]


def load_run_quarantine(explicit: Path | None, command: str) -> QuarantineFile | None:
    """The run's quarantine file, loaded and checked; None when there is none.

    Expired entries load (their tests gate again) and are named on stderr, once.
    """
    path = _resolve(explicit, command)
    if path is None:
        return None
    try:
        loaded = load_quarantine(path)
    except QuarantineFileError as error:
        raise UsageError(f"{command}: {error}") from None
    for problem in loaded.problems:
        print(f"simpler: quarantine file {problem}", file=sys.stderr)
    return loaded


def quarantine_env(quarantine: QuarantineFile | None) -> dict[str, str]:
    """What every pytest process of the run is told; empty overrides an inherited value."""
    return {QUARANTINE_ENV: str(quarantine.path) if quarantine is not None else ""}


def warn_unmatched(quarantine: QuarantineFile | None, listing: SuiteListing | None) -> None:
    """One line per entry that covers no collected test: a renamed test, a typo, a stale entry.

    Only when the suite was listed up front (the run has a test phase that needs it)."""
    if quarantine is None or listing is None:
        return
    collected = [*listing.l2, *(test.nodeid for test in listing.resource)]
    for entry in quarantine.unmatched(collected):
        print(
            f"simpler: quarantine entry {entry.nodeid} ({quarantine.where(entry)}) "
            "matches no collected test",
            file=sys.stderr,
        )


def _resolve(explicit: Path | None, command: str) -> Path | None:
    named = str(explicit) if explicit is not None else os.environ.get(QUARANTINE_ENV, "")
    if named:
        path = Path(named)
        source = "--quarantine" if explicit is not None else QUARANTINE_ENV
        if not path.is_file():
            raise UsageError(f"{command}: {source} {path}: no such quarantine file")
        return path.resolve()
    default = Path(QUARANTINE_FILE_NAME)
    return default.resolve() if default.is_file() else None
