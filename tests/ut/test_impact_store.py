"""The impact map in the history, on a SQLite file and on a real PostgreSQL server: it reads
back as written, jobs of one commit add up to their union, a map of another environment is
not taken, and an add that fails leaves the history as it was."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from simpler.history.store import Connection, open_store
from simpler.impact.map import ImpactMap
from simpler.impact.store import Environment, find_map, load_map, save_map, why_no_map

HERE = Environment("3.11", "linux-x86_64", "aaaa")
OTHER = Environment("3.11", "linux-x86_64", "bbbb")


def _map(nodeid: str, *blocks: tuple[str, str]) -> ImpactMap:
    return ImpactMap(checksums={block: f"sum-{block[1]}" for block in blocks},
                     tests={nodeid: set(blocks)})  # fmt: skip


@pytest.fixture(params=["sqlite", "postgres"])
def conn(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Connection]:
    ref = (
        str(tmp_path / "h.db")
        if request.param == "sqlite"
        else request.getfixturevalue("postgres_url")
    )
    connection = open_store(ref)
    yield connection
    connection.close()


def test_a_map_reads_back_as_written_a_test_of_no_block_included(conn: Connection) -> None:
    written = _map("t.py::a", ("pkg/x.py", "f"), ("pkg/x.py", "<module>"))
    written.tests["t.py::empty"] = set()
    save_map(conn, "c1", HERE, written)
    assert load_map(conn, "c1", HERE) == written
    assert load_map(conn, "c2", HERE) is None


def test_the_jobs_of_one_commit_add_up_to_their_union(conn: Connection) -> None:
    save_map(conn, "c1", HERE, _map("t.py::a", ("pkg/x.py", "f")))
    save_map(conn, "c1", HERE, _map("t.py::b", ("pkg/y.py", "g")))
    save_map(conn, "c1", HERE, _map("t.py::a", ("pkg/y.py", "g")))
    loaded = load_map(conn, "c1", HERE)
    assert loaded is not None
    assert loaded.tests == {"t.py::a": {("pkg/x.py", "f"), ("pkg/y.py", "g")},
                            "t.py::b": {("pkg/y.py", "g")}}  # fmt: skip


def test_the_newest_ancestor_with_a_map_of_this_environment_is_taken(conn: Connection) -> None:
    save_map(conn, "old", HERE, _map("t.py::a", ("pkg/x.py", "f")))
    save_map(conn, "new", OTHER, _map("t.py::b", ("pkg/x.py", "f")))
    assert find_map(conn, ["newest", "new", "old"], HERE) == "old"
    assert find_map(conn, ["newest", "new"], HERE) is None
    assert why_no_map(conn, ["newest", "new"], HERE) == (
        "the maps of the last 2 commits were measured in another environment "
        f"(this one: {HERE.key})"
    )
    assert why_no_map(conn, ["x"], HERE) == "no impact map at any of the last 1 commits"


def test_a_selection_loads_every_known_test_and_only_the_changed_files_blocks(
    conn: Connection,
) -> None:
    save_map(conn, "c1", HERE, _map("t.py::a", ("pkg/x.py", "f"), ("pkg/y.py", "g")))
    save_map(conn, "c1", HERE, _map("t.py::b", ("pkg/z.py", "h")))
    part = load_map(conn, "c1", HERE, files=["pkg/y.py", "docs/x.md"])
    assert part is not None
    assert part.tests == {"t.py::a": {("pkg/y.py", "g")}, "t.py::b": set()}
    assert part.checksums == {("pkg/y.py", "g"): "sum-g"}


def test_an_add_that_fails_leaves_the_history_as_it_was(conn: Connection) -> None:
    save_map(conn, "c1", HERE, _map("t.py::a", ("pkg/x.py", "f")))
    broken = _map("t.py::b", ("pkg/y.py", "g"))
    broken.checksums[("pkg/z.py", "h")] = None  # type: ignore[assignment]  # NOT NULL refuses
    with pytest.raises(Exception):  # noqa: B017 - each store raises its own error class
        save_map(conn, "c1", HERE, broken)
    loaded = load_map(conn, "c1", HERE)
    assert loaded is not None and set(loaded.tests) == {"t.py::a"}


def test_the_environment_names_this_python_and_its_packages() -> None:
    here = Environment.here()
    assert here.python.count(".") == 1 and len(here.packages) == 16
    assert here == Environment.here()
