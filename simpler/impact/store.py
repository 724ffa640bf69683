"""The impact map in the history (a SQLite file or a PostgreSQL server, one SQL for both).

A map belongs to a commit and an environment: the Python, the platform and the installed
packages (a map measured on other packages may not hold here). Adding a run's map to the map
of its commit is a union, in one transaction: two jobs adding at once end with both, and an
add killed mid-way leaves the history as it was.
"""

from __future__ import annotations

import hashlib
import platform
import sys
import time
from dataclasses import dataclass
from importlib import metadata

from simpler.history.store import Connection
from simpler.history.store.connection import transaction
from simpler.impact.map import ImpactMap

__all__ = ["Environment", "find_map", "load_map", "save_map"]

KNOWN = ("", "")  # the row of a test the map knows that ran no block of the project's


@dataclass(frozen=True)
class Environment:
    python: str
    platform: str
    packages: str  # a digest of every installed distribution's name and version

    @classmethod
    def here(cls) -> Environment:
        names = sorted(
            f"{(d.metadata['Name'] or '').lower()}=={d.version}" for d in metadata.distributions()
        )
        packages = hashlib.sha256("\n".join(names).encode()).hexdigest()[:16]
        python = ".".join(map(str, sys.version_info[:2]))
        return cls(python, f"{sys.platform}-{platform.machine()}", packages)

    @property
    def key(self) -> str:
        return f"py{self.python}-{self.platform}-{self.packages}"


def _map_id(commit: str, environment: Environment) -> str:
    return f"{commit} {environment.key}"


def save_map(conn: Connection, commit: str, environment: Environment, impact: ImpactMap) -> None:
    """Add ``impact`` to the map of ``commit`` in ``environment`` (the union)."""
    map_id = _map_id(commit, environment)
    with transaction(conn):
        conn.execute(
            'INSERT INTO impact_maps (map_id, "commit", environment, python, platform, measured) '
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (map_id) DO UPDATE SET "
            "measured = excluded.measured",
            (map_id, commit, environment.key, environment.python, environment.platform,
             time.time()),
        )  # fmt: skip
        conn.executemany(
            "INSERT INTO impact_blocks (map_id, file, qualname, checksum) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (map_id, file, qualname) DO UPDATE SET checksum = excluded.checksum",
            [(map_id, file, name, checksum) for (file, name), checksum in impact.checksums.items()],
        )
        conn.executemany(
            "INSERT INTO impact_tests (map_id, nodeid, file, qualname) VALUES (?, ?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            [(map_id, nodeid, file, name) for nodeid, blocks in impact.tests.items()
             for file, name in (*blocks, KNOWN)],
        )  # fmt: skip


def load_map(conn: Connection, commit: str, environment: Environment) -> ImpactMap | None:
    """The map of ``commit`` in ``environment``; None when none was measured."""
    map_id = _map_id(commit, environment)
    if conn.execute("SELECT 1 FROM impact_maps WHERE map_id = ?", (map_id,)).fetchone() is None:
        return None
    impact = ImpactMap()
    for file, name, checksum in conn.execute(
        "SELECT file, qualname, checksum FROM impact_blocks WHERE map_id = ?", (map_id,)
    ).fetchall():
        impact.checksums[(file, name)] = checksum
    for nodeid, file, name in conn.execute(
        "SELECT nodeid, file, qualname FROM impact_tests WHERE map_id = ?", (map_id,)
    ).fetchall():
        blocks = impact.tests.setdefault(nodeid, set())
        if (file, name) != KNOWN:
            blocks.add((file, name))
    return impact


def find_map(
    conn: Connection, commits: list[str], environment: Environment
) -> tuple[str, ImpactMap] | tuple[None, str]:
    """The map of the newest of ``commits`` (newest first) in ``environment``, with its commit;
    else (None, why not): no map at any of them, or only maps of other environments."""
    marks = ", ".join("?" * len(commits))
    rows = conn.execute(
        f'SELECT "commit", environment FROM impact_maps WHERE "commit" IN ({marks})', commits
    ).fetchall() if commits else []  # fmt: skip
    here = {commit for commit, key in rows if key == environment.key}
    for commit in commits:
        if commit in here:
            found = load_map(conn, commit, environment)
            if found is not None:
                return commit, found
    if rows:
        return None, (
            f"the maps of the last {len(commits)} commits were measured in another environment "
            f"(this one: {environment.key})"
        )
    return None, f"no impact map at any of the last {len(commits)} commits"
