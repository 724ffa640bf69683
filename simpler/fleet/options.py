"""What ``simpler plan`` was asked, typed: simpler/commands/plan.py reads its command line into
one ``PlanOptions``; the matrix (matrix.py) reads that, never the parser's namespace."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from simpler.fleet.planner import RunnerClass

__all__ = ["FORMATS", "PlanOptions"]

FORMATS = ("table", "json", "github")


@dataclass(frozen=True)
class PlanOptions:
    runners: tuple[RunnerClass, ...]
    registry: Path | None = None  # None: plan the suite of the pytest args after --
    platform: str = "a5sim"
    target_minutes: float | None = None
    jobs: Mapping[int, int] | None = None
    durations: Path | None = None
    startup_seconds: float = 20.0
    phase_startup: Mapping[str, float] = field(default_factory=dict)
    out: Path | None = None
    format: str = "table"
