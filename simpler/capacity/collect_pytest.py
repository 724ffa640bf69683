"""Registrations through pytest's own collection, for a suite whose conftest sizes its tests.

A path with a ``conftest.py`` that defines ``pytest_simpler_device_count`` (in its folder or
above, up to the ini file's, or below a folder given) is collected by ``simpler run``'s
up-front collection (``simpler.orchestrator.collection``, no device touched): each collected
test is a registration, an L2 test a 1-device one. A hook from an installed plugin is not
seen (docs/reference.md, "A suite sized by a hook").
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import NamedTuple

from simpler.base.nodeids import file_of
from simpler.capacity.model import InputError
from simpler.orchestrator.collection import ListingError, collect_suite

__all__ = ["HOOK", "SizedTest", "collect_through_pytest", "sized_by_hook"]

HOOK = "pytest_simpler_device_count"
# Where a project's pytest configuration lives: the conftests above it are not its own.
_ROOT_MARKERS = ("pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg", ".git")
# The platform and device the collection is asked for: collecting touches no device.
_PLATFORM, _DEVICES = "a5sim", [0]


class SizedTest(NamedTuple):
    filename: str  # the test's file, as pytest names it (relative to the project's rootdir)
    devices: int
    est_s: float | None


def sized_by_hook(path: Path, *, walk_skip: frozenset[str]) -> bool:
    """A ``conftest.py`` that applies to ``path`` defines ``pytest_simpler_device_count``."""
    folder = path if path.is_dir() else path.parent
    for above in [folder.resolve(), *folder.resolve().parents]:
        if _defines_hook(above / "conftest.py"):
            return True
        if any((above / name).exists() for name in _ROOT_MARKERS):
            break
    if not path.is_dir():
        return False
    for directory, subdirectories, files in os.walk(path):
        subdirectories[:] = [
            name for name in subdirectories if not (name.startswith(".") or name in walk_skip)
        ]
        if "conftest.py" in files and _defines_hook(Path(directory) / "conftest.py"):
            return True
    return False


def _defines_hook(conftest: Path) -> bool:
    try:
        tree = ast.parse(conftest.read_bytes(), filename=str(conftest))
    except (OSError, SyntaxError, ValueError):
        return False  # pytest will say what is wrong with it, if it matters
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == HOOK
        for node in tree.body
    )


def collect_through_pytest(path: Path) -> list[SizedTest]:
    """Every test pytest collects under ``path``, with the count its hook or marker gives
    (1 for an L2 test) and the marker's ``est=`` (None without).

    A suite pytest cannot collect, or a hook that answers what simpler cannot use, is an
    ``InputError`` whose message is pytest's (or the hook's) one line.
    """
    try:
        listing = collect_suite(_PLATFORM, _DEVICES, [str(path)])
    except (ListingError, ValueError) as error:
        raise InputError(f"--collect: {path}: {error}") from None
    tests = [SizedTest(file_of(nodeid), 1, None) for nodeid in listing.l2]
    tests += [SizedTest(file_of(t.nodeid), t.devices, t.est_s) for t in listing.resource]
    return tests
