"""``simpler run --impact-map``: the run's combined coverage, per test, kept in the history as
the impact map of the commit it ran (``simpler.impact.map``, ``simpler.impact.store``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from simpler.base.atomic_write import write_atomically
from simpler.history.impact_rows import MAP_FOLDER, add_map_rows
from simpler.impact.blocks import FileBlocks
from simpler.impact.git_change import clean_head
from simpler.impact.kernel_sources import Launches, add_kernels, kernel_of
from simpler.impact.map import build_map
from simpler.impact.store import Environment, map_rows

__all__ = ["MapTarget", "map_target", "save_run_map"]


@dataclass(frozen=True)
class MapTarget:
    history: str  # a SQLite path or a postgresql:// URL
    commit: str
    root: Path
    # The file beside the report (impact/<run id>.json) that `simpler history import` takes
    # with the report: a CI job's map reaches the history the summary job imports into.
    beside: Path


def map_target(history: str, root: Path, report: Path, run_id: str) -> MapTarget:
    """Where this run's map goes; GitUnanswered when the checkout has no commit to give it."""
    beside = report.parent / MAP_FOLDER / f"{run_id}.json"
    return MapTarget(history, clean_head(root), root, beside)


def save_run_map(
    data_file: Path,
    target: MapTarget,
    launches: Launches,
    known: Mapping[str, FileBlocks] | None = None,
) -> str:
    """Build the map from ``data_file`` (the run's combined coverage, with test contexts) and
    ``launches`` (each test's kernels, from its records) and add it to the history; the line
    that says what was kept. Raises what the store raises."""
    from coverage import CoverageData

    from simpler.history.store import open_store, store_label

    data = CoverageData(basename=str(data_file))
    try:
        data.read()
        impact = build_map(data, target.root, known)
    finally:
        data.close()
    add_kernels(impact, launches, target.root)
    rows = map_rows(target.commit, Environment.here(), impact)
    text = rows.to_json().encode("utf-8")
    write_atomically(target.beside, lambda stream: stream.write(text))
    conn = open_store(target.history)
    try:
        add_map_rows(conn, rows)
    finally:
        conn.close()
    files = len({file for file, _ in impact.checksums})
    kernels = len({name for _, name in impact.checksums if kernel_of(name) is not None})
    launched = f", {kernels} kernels" if kernels else ""
    return (
        f"impact map of {target.commit[:10]}: {len(impact.tests)} tests, "
        f"{len(impact.checksums)} blocks in {files} files{launched}, "
        f"kept in {store_label(target.history)}"
    )
