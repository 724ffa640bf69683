"""What every group of chaos cells shares: a cell is a (name, passed, what was seen) triple, and
a cell that raises is a miss that says why, never a crash of the whole matrix. A cell that
cannot run here (no PostgreSQL server binary) has passed None: skipped, neither a pass nor a
miss, and what was seen says why."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = ["Cell", "guarded"]

Cell = tuple[str, bool | None, str]  # name, passed (None: skipped), what was seen


def guarded(group: str, cell: Callable[[Path], Cell], folder: Path) -> Cell:
    """``cell(folder)``; one whose run left too little to read is a miss, said so."""
    try:
        return cell(folder)
    except Exception as error:  # any of them: the run's fault, not the cell's
        name = f"{group}: {cell.__name__.strip('_').replace('_', ' ')}"
        return name, False, f"{type(error).__name__}: {error}"[:300]
