"""The impact map of a run: per test, the code blocks it ran, from the run's combined coverage.

Each line of a run measured with ``--cov-context test`` names every test that ran it
(``nodeid|run``, ``nodeid|attempt N``); a test ran a block (``simpler.impact.blocks``) when it
ran any line of it. Files are relative to the checkout's root, with ``/``; a file outside it
is left out.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from simpler.impact.blocks import FileBlocks, blocks_of

if TYPE_CHECKING:
    from coverage import CoverageData

__all__ = [
    "BlockKey",
    "ImpactMap",
    "blocks_of_files",
    "build_map",
    "nodeid_of_context",
    "project_path",
]

BlockKey = tuple[str, str]  # (file relative to the root, qualified name)


@dataclass
class ImpactMap:
    """Which blocks each test ran, and the checksum each block had when it ran."""

    checksums: dict[BlockKey, str] = field(default_factory=dict)
    tests: dict[str, set[BlockKey]] = field(default_factory=dict)


def nodeid_of_context(context: str) -> str | None:
    """The node id a context names (``nodeid|run``, ``nodeid|attempt 2``); None for the
    empty context (code that ran outside any test: imports, collection, fixtures' set-up
    before the first test)."""
    nodeid, bar, _attempt = context.rpartition("|")
    return nodeid if bar and nodeid else None


def build_map(
    data: CoverageData, root: Path, known: Mapping[str, FileBlocks] | None = None
) -> ImpactMap:
    """The impact map in ``data`` (read with its contexts), its files named from ``root``;
    ``known``: the blocks of files found already, by the path measured."""
    built = ImpactMap()
    root = root.resolve()
    for measured in sorted(data.measured_files()):
        relative = project_path(measured, root)
        if relative is None:
            continue
        blocks = (known or {}).get(measured) or _blocks_in(measured)
        if blocks is None:
            continue  # not in the map: a change to it selects everything
        for qualname, block in blocks.blocks.items():
            built.checksums[(relative, qualname)] = block.checksum
        _add_tests(built, relative, blocks, (data.contexts_by_lineno(measured) or {}).items())
    return built


def _blocks_in(path: str) -> FileBlocks | None:
    try:
        return blocks_of(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None


def blocks_of_files(paths: Iterable[str]) -> dict[str, FileBlocks]:
    """The blocks of each of ``paths`` that reads as Python, by path."""
    found = {path: _blocks_in(path) for path in paths}
    return {path: blocks for path, blocks in found.items() if blocks is not None}


def _add_tests(
    built: ImpactMap,
    relative: str,
    blocks: FileBlocks,
    lines: Iterable[tuple[int, list[str]]],
) -> None:
    # Contexts gathered per block first: a test names each block once, not once per line.
    by_block: dict[str, set[str]] = {}
    for line, contexts in lines:
        by_block.setdefault(blocks.block_at(line), set()).update(contexts)
    for name, named in by_block.items():
        key = (relative, name)
        for context in named:
            nodeid = nodeid_of_context(context)
            if nodeid is not None:
                built.tests.setdefault(nodeid, set()).add(key)


def project_path(measured: str, root: Path) -> str | None:
    """``measured`` named from ``root`` (resolved) with ``/``; None when it lies outside."""
    path = Path(os.path.realpath(measured))
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return None
