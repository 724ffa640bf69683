"""Node ids as pytest writes them: ``path.py::TestClass::test_name[param]``."""

from __future__ import annotations

__all__ = ["class_of", "file_of"]


def class_of(nodeid: str) -> str:
    """``f.py::TestA::test_x[1]`` -> ``f.py::TestA``; a module-level test -> its module."""
    parts = nodeid.split("::")
    return "::".join(parts[:-1]) if len(parts) > 1 else parts[0]


def file_of(nodeid: str) -> str:
    return nodeid.split("::")[0]
