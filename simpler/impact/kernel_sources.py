"""Kernels in the impact map: a device test ran the sources of every kernel it launched.

Each source a test's record names for a kernel it launched becomes a block ``kernel <name>``,
checksummed on the file's text without blank lines, ``//`` comment lines and indentation (C++
is not parsed: one test too many is safe). A source outside the checkout is left out
(docs/affected.md, "Kernels are blocks too").
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from simpler.impact.map import ImpactMap, project_path

__all__ = ["KERNEL", "Launches", "add_kernels", "kernel_of", "source_checksum"]

KERNEL = "kernel "  # a kernel block's name is this and the kernel's; no Python name has a space

Launches = Mapping[str, Mapping[str, tuple[str, ...]]]  # nodeid -> kernel -> its sources


def source_checksum(text: str) -> str:
    lines = (line.strip() for line in text.splitlines())
    kept = "\n".join(line for line in lines if line and not line.startswith("//"))
    return hashlib.sha256(kept.encode("utf-8")).hexdigest()[:16]


def kernel_of(qualname: str) -> str | None:
    """The kernel a block's name stands for; None for a Python block."""
    return qualname[len(KERNEL) :] if qualname.startswith(KERNEL) else None


def add_kernels(impact: ImpactMap, launches: Launches, root: Path) -> None:
    """Add each test's kernels (``launches``) to ``impact`` as blocks of their sources."""
    root = root.resolve()
    checksums: dict[str, str | None] = {}  # a source read once, whichever tests launched it
    for nodeid, kernels in launches.items():
        ran = impact.tests.setdefault(nodeid, set())
        for kernel, sources in kernels.items():
            for source in sources:
                relative = project_path(source, root)
                if relative is None:
                    continue
                if relative not in checksums:
                    checksums[relative] = _checksum_of(root / relative)
                checksum = checksums[relative]
                if checksum is None:
                    continue  # unreadable now: not in the map, so a change to it runs everything
                impact.checksums[(relative, KERNEL + kernel)] = checksum
                ran.add((relative, KERNEL + kernel))


def _checksum_of(path: Path) -> str | None:
    try:
        return source_checksum(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
