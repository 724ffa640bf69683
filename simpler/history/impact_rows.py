"""The impact map's rows in the history (``impact_maps``, ``impact_blocks``, ``impact_tests``),
and the file a run leaves beside its report for ``simpler history import`` to add them from.

Plain data here (a commit, an environment, blocks and tests as tuples): what a map is and how
it is built lives in ``simpler.impact``, above the history. Adding is a union, in one
transaction: jobs and shards of one commit add up, two at once end with both, and an add
killed mid-way leaves the history as it was.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from simpler.history.store.connection import Connection, transaction

__all__ = ["KNOWN", "MAP_FOLDER", "MapRows", "add_map_rows", "import_map_files", "map_id_of"]

KNOWN = ("", "")  # the row of a test the map knows that ran no block of the project's
MAP_FOLDER = "impact"  # beside the report file: one <run id>.json per run that kept a map
Block = tuple[str, str]  # (file from the checkout's root, qualified name)


@dataclass(frozen=True)
class MapRows:
    commit: str
    environment: str  # the environment's key: Python, platform, a digest of the packages
    python: str
    platform: str
    checksums: Mapping[Block, str]
    tests: Mapping[str, Iterable[Block]]

    def to_json(self) -> str:
        return json.dumps({
            "commit": self.commit, "environment": self.environment, "python": self.python,
            "platform": self.platform,
            "blocks": [[f, q, c] for (f, q), c in sorted(self.checksums.items())],
            "tests": {n: sorted([f, q] for f, q in blocks) for n, blocks in self.tests.items()},
        })  # fmt: skip

    @classmethod
    def from_json(cls, text: str) -> MapRows:
        data = json.loads(text)
        return cls(
            str(data["commit"]), str(data["environment"]), str(data["python"]),
            str(data["platform"]),
            {(str(f), str(q)): str(c) for f, q, c in data["blocks"]},
            {str(n): [(str(f), str(q)) for f, q in blocks] for n, blocks in data["tests"].items()},
        )  # fmt: skip


def map_id_of(commit: str, environment: str) -> str:
    return f"{commit} {environment}"


def add_map_rows(conn: Connection, rows: MapRows) -> None:
    """Add ``rows`` to the map of their commit and environment (the union)."""
    map_id = map_id_of(rows.commit, rows.environment)
    with transaction(conn):
        conn.execute(
            'INSERT INTO impact_maps (map_id, "commit", environment, python, platform, measured) '
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (map_id) DO UPDATE SET "
            "measured = excluded.measured",
            (map_id, rows.commit, rows.environment, rows.python, rows.platform, time.time()),
        )
        conn.executemany(
            "INSERT INTO impact_blocks (map_id, file, qualname, checksum) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (map_id, file, qualname) DO UPDATE SET checksum = excluded.checksum",
            [(map_id, file, name, checksum) for (file, name), checksum in rows.checksums.items()],
        )
        conn.executemany(
            "INSERT INTO impact_tests (map_id, nodeid, file, qualname) VALUES (?, ?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            [(map_id, nodeid, file, name) for nodeid, blocks in rows.tests.items()
             for file, name in (*blocks, KNOWN)],
        )  # fmt: skip


def import_map_files(conn: Connection, reports: Iterable[Path], runs: Iterable[str]) -> int:
    """Add the maps the ``runs`` of ``reports`` left beside them; how many. A file that is not
    a map is a ValueError naming it (the history keeps the maps added before it)."""
    added = 0
    for report in reports:
        for path in [Path(report).parent / MAP_FOLDER / f"{run}.json" for run in sorted(runs)]:
            if not path.is_file():
                continue
            try:
                rows = MapRows.from_json(path.read_text(encoding="utf-8"))
            except (ValueError, KeyError, TypeError) as error:
                raise ValueError(f"{path} is not an impact map: {error}") from None
            add_map_rows(conn, rows)
            added += 1
    return added
