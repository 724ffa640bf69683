"""The data files of one or more runs combined into one, and the account of what was lost.

Only the files of the runs named are read (never an earlier run's, never a stray
``.coverage``). Each run recorded its checkout root, so a file measured in another folder
(another CI job's checkout) maps onto this one without a ``[paths]`` section. A file that
coverage.py cannot read (torn by a kill, written by another version) is named and left
out; the rest are combined.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from simpler.coverage.accounts import ProcessAccount, RunData, account_processes

if TYPE_CHECKING:
    from coverage import CoverageData

__all__ = ["Combined", "combine_runs"]


@dataclass
class Combined:
    data_file: Path
    files_combined: int = 0
    accounts: list[ProcessAccount] = field(default_factory=list)
    from_tests: int = 0  # files of processes that a test started
    unreadable: list[str] = field(default_factory=list)  # "<file>: <why>", any process's

    @property
    def lost(self) -> list[ProcessAccount]:
        return [a for a in self.accounts if a.lost]

    @property
    def partial(self) -> list[ProcessAccount]:
        return [a for a in self.accounts if a.partial]


def combine_runs(runs: list[RunData], out: Path, root: str | None = None) -> Combined:
    """Combine ``runs``' data into ``out`` (replaced), paths mapped onto ``root`` (the cwd)."""
    from coverage import CoverageData

    here = os.path.abspath(root or os.getcwd())
    out.parent.mkdir(parents=True, exist_ok=True)
    for stale in (out, *out.parent.glob(out.name + "-journal")):
        stale.unlink(missing_ok=True)
    combined = Combined(out)
    target = CoverageData(basename=str(out))
    try:
        _combine_into(target, runs, here, combined)
        target.write()
    finally:
        target.close()  # its SQLite connection: left to the collector, 3.13 warns of it
    return combined


def _combine_into(target: CoverageData, runs: list[RunData], here: str, combined: Combined) -> None:
    for run in runs:
        accounts, unclaimed = account_processes(run)
        mapper = _root_mapper(run.root, here)
        owners = {path: account for account in accounts for path in account.files}
        for account in accounts:
            account.nothing_saved = True
        for path in [*owners, *unclaimed]:
            problem = _merge(target, path, mapper, owners.get(path))
            if problem is None:
                combined.files_combined += 1
                combined.from_tests += path in unclaimed
                continue
            combined.unreadable.append(f"{path.name}: {problem}")
            owner = owners.get(path)
            if owner is not None:
                owner.files.remove(path)
                owner.unreadable.append(problem)
        combined.accounts += accounts


def _merge(
    target: CoverageData, path: Path, mapper: Callable[[str], str], owner: ProcessAccount | None
) -> str | None:
    """Add one data file to ``target``; why it could not be read, or None. A stopped process's
    file is looked into: one that holds no line saved nothing its tests ran."""
    from coverage import CoverageData
    from coverage.exceptions import CoverageException

    source = CoverageData(basename=str(path))
    try:
        source.read()
        target.update(source, map_path=mapper)
        if owner is not None and owner.why is not None and _holds_lines(source):
            owner.nothing_saved = False
    except (CoverageException, OSError, ValueError) as error:
        return _first_line(str(error)) or type(error).__name__
    finally:
        source.close()
    return None


def _holds_lines(data: CoverageData) -> bool:
    return any(data.lines(name) or data.arcs(name) for name in data.measured_files())


def _root_mapper(recorded: str, here: str) -> Callable[[str], str]:
    """A path measured under the run's ``recorded`` root, as the same file under ``here``."""
    if not recorded or os.path.abspath(recorded) == here:
        return lambda path: path
    prefix = os.path.abspath(recorded).rstrip(os.sep) + os.sep

    def mapped(path: str) -> str:
        return os.path.join(here, path[len(prefix) :]) if path.startswith(prefix) else path

    return mapped


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""
