"""What ``simpler capacity`` was asked, typed: simpler/commands/capacity.py reads its command
line into one ``CapacityOptions``; the report (report.py) reads that, never the parser's
namespace. Light on purpose: the command's parser imports it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from simpler.capacity.pool_spec import PoolSpec

__all__ = ["FORMATS", "SECTIONS", "CapacityOptions"]

SECTIONS = ("summary", "by-device-count", "by-suite", "all")  # the markdown's --section
FORMATS = ("markdown", "json")


@dataclass(frozen=True)
class CapacityOptions:
    registry: tuple[Path, ...] = ()
    collect: tuple[str, ...] = ()
    section: str = "summary"
    format: str = "markdown"
    step_summary: bool = False
    backend: tuple[str, ...] = ()
    pool: PoolSpec | None = None
    nightly: bool = False
    lenient: bool = False
