"""``simpler run --impact-map``: the run's combined coverage, per test, kept in the history as
the impact map of the commit it ran (``simpler.impact.map``, ``simpler.impact.store``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from simpler.impact.git_change import clean_head
from simpler.impact.map import build_map
from simpler.impact.store import Environment, save_map

__all__ = ["MapTarget", "map_target", "save_run_map"]


@dataclass(frozen=True)
class MapTarget:
    history: str  # a SQLite path or a postgresql:// URL
    commit: str
    root: Path


def map_target(history: str, root: Path) -> MapTarget:
    """Where this run's map goes; GitUnanswered when the checkout has no commit to give it."""
    return MapTarget(history, clean_head(root), root)


def save_run_map(data_file: Path, target: MapTarget) -> str:
    """Build the map from ``data_file`` (the run's combined coverage, with test contexts) and
    add it to the history; the line that says what was kept. Raises what the store raises."""
    from coverage import CoverageData

    from simpler.history.store import open_store, store_label

    data = CoverageData(basename=str(data_file))
    try:
        data.read()
        impact = build_map(data, target.root)
    finally:
        data.close()
    conn = open_store(target.history)
    try:
        save_map(conn, target.commit, Environment.here(), impact)
    finally:
        conn.close()
    files = len({file for file, _ in impact.checksums})
    return (
        f"impact map of {target.commit[:10]}: {len(impact.tests)} tests, "
        f"{len(impact.checksums)} blocks in {files} files, kept in {store_label(target.history)}"
    )
