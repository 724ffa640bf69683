"""Which processes were to write coverage, and what became of each one's data.

From the ``coverage`` records (``run``: the measured run; ``process``: a pytest process that
measured itself, as it starts; ``ended``: how a process the run started ended, ``why`` None
when by itself). A data file is claimed by the process whose pid its name carries, unclaimed
files are the tests' own processes'; a process with no file is lost, one killed or crashed
that saved is partial (docs/coverage.md, "What the summary says").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from simpler.reporting.records import CoverageRecord, Record

__all__ = ["ProcessAccount", "RunData", "account_processes", "runs_measured"]

_PID = re.compile(r"\.pid(\d+)\.X\w+x(\.H\w+h)?$")  # coverage.py names a saved file .H<hash>h


@dataclass
class RunData:
    """One measured run as its report file tells it: where its data is and its checkout root."""

    run_id: str
    data_dir: Path
    root: str
    settings: CoverageRecord  # the run's ``event: run`` record
    records: list[CoverageRecord] = field(default_factory=list)

    def data_files(self) -> list[Path]:
        if not self.data_dir.is_dir():
            return []
        return sorted(p for p in self.data_dir.iterdir() if _PID.search(p.name))


@dataclass
class ProcessAccount:
    label: str
    pids: set[int] = field(default_factory=set)
    files: list[Path] = field(default_factory=list)
    why: str | None = None  # how it ended, when not by itself
    unreadable: list[str] = field(default_factory=list)  # its files coverage.py could not read
    # Its files hold no measured line: a process that starts writes its (empty) file at once,
    # so one killed before it saved anything still has a file.
    nothing_saved: bool = False

    @property
    def lost(self) -> bool:
        return not self.files or (self.why is not None and self.nothing_saved)

    @property
    def partial(self) -> bool:
        return not self.lost and (self.why is not None or bool(self.unreadable))


def runs_measured(report: Path, records: Iterable[Record]) -> list[RunData]:
    """The runs of ``report``'s records that were measured, each with its own records."""
    runs: dict[str, RunData] = {}
    for record in records:
        if not isinstance(record, CoverageRecord):
            continue
        run_id = record.run
        if record.event == "run" and run_id not in runs:
            runs[run_id] = RunData(run_id, report.parent / record.data_dir, record.root, record)
        if run_id in runs:
            runs[run_id].records.append(record)
    return list(runs.values())


def pid_of(path: Path) -> int | None:
    found = _PID.search(path.name)
    return int(found.group(1)) if found else None


def account_processes(run: RunData) -> tuple[list[ProcessAccount], list[Path]]:
    """Every process that was to write coverage, with its files; and the files no process of
    the run claims (those of processes a test started)."""
    accounts: dict[str, ProcessAccount] = {}
    for record in run.records:
        if record.event not in ("process", "ended"):
            continue
        account = accounts.setdefault(record.label, ProcessAccount(record.label))
        if record.pid is not None:
            account.pids.add(record.pid)
        if record.event == "ended" and record.why:
            account.why = record.why
    by_pid = {pid: account for account in accounts.values() for pid in account.pids}
    unclaimed: list[Path] = []
    for path in run.data_files():
        owner = by_pid.get(pid_of(path) or -1)
        if owner is None:
            unclaimed.append(path)
        else:
            owner.files.append(path)
    return list(accounts.values()), unclaimed
