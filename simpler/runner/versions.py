"""What ``simpler --version`` says: the versions a bug report needs, one line each.

Read from the installed distributions' metadata, so answering imports neither pytest nor
cppyy and builds nothing: whether the simulator's library is built is a look in the cache.
"""

from __future__ import annotations

import platform
from importlib import metadata

from simpler.runner.library import simulator_library

__all__ = ["version_lines"]

# What runs a suite under simpler, by the name a person calls it -> its distribution's name.
DEPENDENCIES = {"pytest": "pytest", "coverage.py": "coverage", "cppyy": "cppyy"}


def version_lines() -> list[str]:
    return [
        f"simpler {_installed('simpler')}",
        f"Python {platform.python_version()} ({platform.python_implementation()})",
        *(f"{shown} {_installed(name)}" for shown, name in DEPENDENCIES.items()),
        _simulator_line(),
    ]


def _installed(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def _simulator_line() -> str:
    library = simulator_library()
    if library.exists():
        return f"simulator library: built ({library})"
    # The first run on a simulated card compiles it (or cling compiles it in each process).
    return f"simulator library: not built yet (the first run builds {library})"
