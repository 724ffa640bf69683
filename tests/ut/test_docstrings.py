"""Docstrings stay short: a module's, class's or function's says what it holds and what
callers rely on, in at most 7 lines; the design behind it lives in docs/."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("simpler", "recovery")
MAX_DOCSTRING_LINES = 7

_HAS_DOCSTRING = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def long_docstrings(source: str) -> dict[str, int]:
    """The docstrings of ``source`` longer than the limit: their owner's name to their lines."""
    long = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, _HAS_DOCSTRING):
            continue
        docstring = ast.get_docstring(node, clean=False)
        if docstring is not None and len(docstring.splitlines()) > MAX_DOCSTRING_LINES:
            long[getattr(node, "name", "<module>")] = len(docstring.splitlines())
    return long


def test_no_product_docstring_is_an_essay() -> None:
    essays = {
        f"{path.relative_to(ROOT).as_posix()}: {name}": lines
        for package in PRODUCT
        for path in sorted((ROOT / package).rglob("*.py"))
        for name, lines in long_docstrings(path.read_text(encoding="utf-8")).items()
    }
    assert essays == {}, "move the design to docs/ and keep what callers rely on"


def test_an_eight_line_docstring_is_caught() -> None:
    """The rule itself: the closing quotes' line counts, as it does in the source."""
    seven = '"""One.\n\n3\n4\n5\n6\n"""\n'
    eight = 'def f():\n    """One.\n\n    3\n    4\n    5\n    6\n    7\n    """\n'
    assert long_docstrings(seven) == {}
    assert long_docstrings(eight) == {"f": 8}
