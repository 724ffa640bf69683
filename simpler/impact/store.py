"""The impact map in the history (a SQLite file or a PostgreSQL server, one SQL for both).

A map belongs to a commit and an environment: the Python, the platform and the installed
packages (a map measured on other packages may not hold here). Adding a run's map to the map
of its commit is a union, in one transaction: two jobs adding at once end with both, and an
add killed mid-way leaves the history as it was.
"""

from __future__ import annotations

import functools
import hashlib
import platform
import sys
from collections.abc import Collection
from dataclasses import dataclass
from importlib import metadata

from simpler.history.impact_rows import KNOWN, MapRows, add_map_rows, map_id_of
from simpler.history.store import Connection
from simpler.impact.map import ImpactMap

__all__ = ["Environment", "find_map", "load_map", "map_rows", "save_map", "why_no_map"]

MAX_FILES_ASKED = 500  # more changed files than this: the whole map (a statement's bound values)


@dataclass(frozen=True)
class Environment:
    python: str
    platform: str
    packages: str  # a digest of every installed distribution's name and version

    @classmethod
    @functools.cache  # the installed packages do not change under a running process
    def here(cls) -> Environment:
        # A set: a package found twice on the path (an editable checkout's egg-info beside
        # its dist-info) is one package, whichever process asks.
        names = sorted(
            {f"{(d.metadata['Name'] or '').lower()}=={d.version}" for d in metadata.distributions()}
        )
        packages = hashlib.sha256("\n".join(names).encode()).hexdigest()[:16]
        python = ".".join(map(str, sys.version_info[:2]))
        return cls(python, f"{sys.platform}-{platform.machine()}", packages)

    @property
    def key(self) -> str:
        return f"py{self.python}-{self.platform}-{self.packages}"


def _map_id(commit: str, environment: Environment) -> str:
    return map_id_of(commit, environment.key)


def map_rows(commit: str, environment: Environment, impact: ImpactMap) -> MapRows:
    """The rows the history keeps of ``impact`` (and the file beside a report holds)."""
    return MapRows(commit, environment.key, environment.python, environment.platform,
                   impact.checksums, impact.tests)  # fmt: skip


def save_map(conn: Connection, commit: str, environment: Environment, impact: ImpactMap) -> None:
    """Add ``impact`` to the map of ``commit`` in ``environment`` (the union)."""
    add_map_rows(conn, map_rows(commit, environment, impact))


def load_map(
    conn: Connection, commit: str, environment: Environment, files: Collection[str] | None = None
) -> ImpactMap | None:
    """The map of ``commit`` in ``environment``; None when none was measured. ``files``: only
    what a selection needs of it, every test it knows with the blocks of those files (a map
    of 10,000 tests of 60 blocks each is loaded in a fraction of the time)."""
    map_id = _map_id(commit, environment)
    if conn.execute("SELECT 1 FROM impact_maps WHERE map_id = ?", (map_id,)).fetchone() is None:
        return None
    within, chosen = "", [map_id]
    if files is not None and len(files) < MAX_FILES_ASKED:
        wanted = sorted(files)
        within = f" AND file IN ({', '.join('?' * (len(wanted) + 1))})"
        chosen += [*wanted, KNOWN[0]]
    impact = ImpactMap()
    for file, name, checksum in conn.execute(
        f"SELECT file, qualname, checksum FROM impact_blocks WHERE map_id = ?{within}", chosen
    ).fetchall():
        impact.checksums[(file, name)] = checksum
    for nodeid, file, name in conn.execute(
        f"SELECT nodeid, file, qualname FROM impact_tests WHERE map_id = ?{within}", chosen
    ).fetchall():
        blocks = impact.tests.setdefault(nodeid, set())
        if (file, name) != KNOWN:
            blocks.add((file, name))
    return impact


def find_map(conn: Connection, commits: list[str], environment: Environment) -> str | None:
    """The newest of ``commits`` (newest first) with a map in ``environment``; None, with
    :func:`why_no_map` to say why."""
    here = set(_maps_at(conn, commits, environment.key))
    return next((commit for commit in commits if commit in here), None)


def why_no_map(conn: Connection, commits: list[str], environment: Environment) -> str:
    if _maps_at(conn, commits, None):
        return (
            f"the maps of the last {len(commits)} commits were measured in another environment "
            f"(this one: {environment.key})"
        )
    return f"no impact map at any of the last {len(commits)} commits"


def _maps_at(conn: Connection, commits: list[str], key: str | None) -> list[str]:
    if not commits:
        return []
    marks = ", ".join("?" * len(commits))
    rows = conn.execute(
        f'SELECT "commit", environment FROM impact_maps WHERE "commit" IN ({marks})', commits
    ).fetchall()
    return [commit for commit, environment in rows if key is None or environment == key]
