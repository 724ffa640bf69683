"""What ``simpler history`` was asked, typed: simpler/commands/history.py reads its command
line into one ``HistoryOptions``; the subcommands (subcommands.py, quarantine_advice.py) read
that, never the parser's namespace. One flat class: each subcommand fills the fields of its own
options."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["HistoryOptions"]


@dataclass(frozen=True)
class HistoryOptions:
    command: str  # import, flaky, show, quarantine, durations, html, prune, copy
    db: str | None = None  # a SQLite path or a postgresql:// URL
    reports: tuple[Path, ...] = ()  # import
    commit: str | None = None
    branch: str | None = None  # import's, and the window's
    runner: str | None = None
    window: float | None = None  # days
    runs: int | None = None
    min_runs: int = 1
    format: str = "table"  # flaky
    nodeid: str = ""  # show
    suggest: bool = False  # quarantine
    release: bool = False
    write: bool = False
    quarantine: Path | None = None
    threshold: float = 0.05
    passes: int = 20
    runners: int = 2
    owner: str | None = None
    days: int = 30
    out: Path = Path()  # durations and html, which require it
    before: str = ""  # prune
    vacuum: bool = False
    source: str = ""  # copy: a file or a server URL
    target: str = ""
