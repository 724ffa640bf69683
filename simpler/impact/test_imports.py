"""What the suite's test files import: a test file another one imports is a module too.

A change to a test file selects its own tests by path. When other test files import it (a
helper, a table of cases), what its import does reaches their tests as well, and the map does
not attribute import-time code: such a change then fails closed. The suite's files are read
as text (a regex, not a parse: it must cost little on a suite of thousands of files), and
every name an import statement names counts, which errs towards running more.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path, PurePosixPath

__all__ = ["SuiteImports", "imported_names", "imports_module"]

# ``from M import (a, b)`` over several lines, ``from M import a, b``, ``import M, N.O``.
_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]*(?:\(([^)]*)\)|([\w \t,.]+))"
    r"|import[ \t]+([\w \t,.]+))",
    re.MULTILINE,
)
_COMMENT = re.compile(r"#[^\n]*")
_NAME = re.compile(r"[\w.]+")


def imported_names(root: Path, files: Iterable[str]) -> dict[str, frozenset[str]]:
    """Per file (from ``root``), each dotted part of every name its imports name."""
    found: dict[str, frozenset[str]] = {}
    for file in sorted(set(files)):
        try:
            text = (root / file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        names: set[str] = set()
        for found_import in _IMPORT.findall(_COMMENT.sub("", text)):
            for dotted in _NAME.findall(" ".join(found_import)):  # an alias too: errs towards more
                names.update(part for part in dotted.split(".") if part)
        found[file] = frozenset(names)
    return found


class SuiteImports(Mapping[str, frozenset[str]]):
    """:func:`imported_names` of ``files``, read on first use: a decision needs them only
    when a test file's import-time code changed, so most never read the suite's files."""

    def __init__(self, root: Path, files: Iterable[str]) -> None:
        self._root, self._files = root, frozenset(files)
        self._read: dict[str, frozenset[str]] | None = None

    def _names(self) -> dict[str, frozenset[str]]:
        if self._read is None:
            self._read = imported_names(self._root, self._files)
        return self._read

    def __getitem__(self, file: str) -> frozenset[str]:
        return self._names()[file]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


def imports_module(path: str, imports: Mapping[str, frozenset[str]]) -> bool:
    """Another of the files in ``imports`` names ``path``'s module in an import."""
    module = PurePosixPath(path).stem
    return any(module in names for file, names in imports.items() if file != path)
