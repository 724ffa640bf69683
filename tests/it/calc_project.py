"""The tiny project the per-test selection's tests change: a package of two functions, its
pytest configuration and what git should not see (each test adds its own tests)."""

from __future__ import annotations

CALC_PACKAGE = {
    "pkg/__init__.py": "",
    "pkg/calc.py": """
        def double(x):
            return x * 2


        def triple(x):
            return x * 3
        """,
    "pytest.ini": "[pytest]\npythonpath = .\n",
    ".gitignore": ".simpler/\n.coverage*\n__pycache__/\n",
}
