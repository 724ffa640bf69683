"""Chaos cells for the history on a PostgreSQL server: the ways a server breaks an import.

One run's report in two shards (its L2 phase, then the rest: the rest adds the Resource
tests, so the run's suite is new when it arrives). Each cell has a database of its own on
one server, and ends checking the tables, row for row, and ``history flaky`` against a
SQLite file fed the same shards one at a time:

- the server killed (``pg_ctl stop -m immediate``) while shard 2's import is inside its
  transaction: exit 3, one line naming the server, no password; restarted, the run is as
  shard 1 left it, and importing shard 2 again completes it;
- the importer killed with SIGKILL there: the run is as it was, the next import completes it;
- the importer's connection ended by the server (``pg_terminate_backend``) there: exit 3,
  one line, no password; the run as it was; the next import completes it;
- two imports of one run at once (both shards, and the second shard twice), released
  together: every one exits 0 and the run is what one at a time gives;
- the server restarted between a run's shards: nothing lost.

"Inside its transaction" is made so, not timed: a connection of the cell's own holds
``suite_tests`` (which an import writes last, and only for a suite not stored yet) until the
server reports the importer waiting for it, with the rest of its run's rows written.

Without a PostgreSQL server binary (or psycopg) every cell is skipped, said why. The server
is ``tests/postgres_server.py``'s, the tests' own.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import closing, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chaos_cells import Cell

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the tests' server helper, not a copy of it

from history_tables import every_row, held_table, wait_for_waiters, wait_until_alone  # noqa: E402
from postgres_server import PASSWORD, PostgresServer, find_server_bin, start_server  # noqa: E402

__all__ = ["server_cells"]

GROUP = "history server"
DEADLINE_S = 60.0  # for a condition the server reports; each cell takes a few seconds
Tables = dict[str, list[tuple[Any, ...]]]
Importer = subprocess.Popen[str]


@dataclass
class Lab:
    """What every cell shares: the server, the two shards, and what one at a time gives."""

    server: PostgresServer
    folder: Path
    first: Path  # shard 1: the run's L2 phase
    rest: Path  # shard 2: its Resource, retry and report phases
    tables: Tables = field(default_factory=dict)  # of a SQLite file fed first, then rest
    flaky: Any = None  # its `history flaky --format json`
    numbers: Iterator[int] = field(default_factory=itertools.count)

    def database(self, cell: str) -> tuple[str, str]:
        """A new database for a cell: its URL (with the password) and its label."""
        name = f"chaos_{next(self.numbers)}_{cell}"
        return self.server.create_database(name), f"127.0.0.1:{self.server.port}/{name}"


def server_cells(folder: Path, report: Path) -> list[Cell]:
    """The cells below on one server started for them, or each skipped, said why."""
    cells: list[tuple[str, Callable[[Lab], tuple[bool, str]]]] = [
        ("server killed mid-import", _server_killed),
        ("importer killed mid-import", _importer_killed),
        ("connection lost mid-import", _connection_lost),
        ("two imports of one run at once", _imports_at_once),
        ("server restarted between shards", _restarted_between_shards),
    ]
    names = [f"{GROUP}: {name}" for name, _ in cells]
    why = _why_not()
    if why:
        return [(name, None, why) for name in names]
    folder = folder / "server"
    folder.mkdir(parents=True, exist_ok=True)
    bin_folder = find_server_bin()
    assert bin_folder is not None  # _why_not said so
    try:
        server = start_server(bin_folder)
    except RuntimeError as error:  # a binary that cannot start a server: every cell a miss
        return [(name, False, str(error)[-300:]) for name in names]
    try:
        lab = _lab(server, folder, report)
        return [_guarded(name, cell, lab) for name, cell in cells]
    except Exception as error:  # no shards or no reference (the fault run left no report)
        return [(name, False, f"{type(error).__name__}: {error}"[:300]) for name in names]
    finally:
        with suppress(subprocess.CalledProcessError):  # a miss must not crash the matrix
            server.stop()


def _lab(server: PostgresServer, folder: Path, report: Path) -> Lab:
    lab = Lab(server, folder, *_shards(report, folder))
    lab.tables, lab.flaky = _reference(lab)
    return lab


def _why_not() -> str:
    if find_server_bin() is None:
        return "no PostgreSQL server binary (initdb, pg_ctl) on this machine"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "no psycopg (pip install 'simpler[postgres]')"
    return ""


def _guarded(name: str, cell: Callable[[Lab], tuple[bool, str]], lab: Lab) -> Cell:
    """A cell that raises is a miss that says why (as chaos_cells.guarded), never a crash."""
    try:
        passed, seen = cell(lab)
    except Exception as error:
        passed, seen = False, f"{type(error).__name__}: {error}"[:300]
        # It may have raised with the server stopped: the next cells need it running (a
        # start of a running server fails, and is no matter).
        with suppress(subprocess.CalledProcessError):
            lab.server.start()
    return f"{GROUP}: {name}", passed, seen.replace(PASSWORD, "***")


def _shards(report: Path, folder: Path) -> tuple[Path, Path]:
    """The run's report as two CI jobs send it: up to its first phase's end, then the rest."""
    lines = report.read_text().splitlines(keepends=True)
    records = [json.loads(line) for line in lines]
    cut = 1 + next(
        n for n, r in enumerate(records) if r.get("type") == "phase" and r.get("event") == "end"
    )
    first, rest = folder / "shard-1.jsonl", folder / "shard-2.jsonl"
    first.write_text("".join(lines[:cut]))
    rest.write_text("".join(lines[cut:]))
    return first, rest


def _reference(lab: Lab) -> tuple[Tables, Any]:
    db = lab.folder / "one-at-a-time.db"
    for shard in (lab.first, lab.rest):
        _done(_import(str(db), shard))
    return every_row(db), _flaky(str(db))


# -- the cells -----------------------------------------------------------------------------


def _server_killed(lab: Lab) -> tuple[bool, str]:
    def kill_the_server(url: str, _: int, __: Importer) -> None:
        with closing(_watch(url)) as watcher:
            # The test server commits asynchronously (synchronous_commit=off): a checkpoint
            # makes shard 1's commit durable, so an immediate stop loses only the import's.
            watcher.execute("CHECKPOINT")
        lab.server.halt("immediate")

    return _ended_mid_import(lab, "server_killed", kill_the_server, restart=True)


def _importer_killed(lab: Lab) -> tuple[bool, str]:
    def kill_the_importer(_: str, __: int, importer: Importer) -> None:
        importer.kill()  # SIGKILL, as a cancelled CI job: no clean-up of its own

    return _ended_mid_import(lab, "importer_killed", kill_the_importer, says_why=False)


def _connection_lost(lab: Lab) -> tuple[bool, str]:
    def terminate_its_session(url: str, pid: int, _: Importer) -> None:
        with closing(_watch(url)) as watcher:
            watcher.execute("SELECT pg_terminate_backend(%s)", (pid,))

    return _ended_mid_import(lab, "connection_lost", terminate_its_session)


def _ended_mid_import(
    lab: Lab,
    cell: str,
    end: Callable[[str, int, Importer], None],
    *,
    restart: bool = False,
    says_why: bool = True,
) -> tuple[bool, str]:
    """Shard 1 stored; shard 2's import held at the suites inside its transaction and ended
    there by ``end(url, its server pid, its process)``. Then the run must be as shard 1 left
    it, and shard 2 imported again must complete it; an import that lives to say why
    (``says_why``: not one killed) must say so in one line, exit 3."""
    url, label = lab.database(cell)
    _done(_import(url, lab.first))
    before = every_row(url)
    with held_table(url, "suite_tests") as gate:
        importer = _start_import(url, lab.rest)
        (pid,) = wait_for_waiters(url, [importer])  # waiting at the suites, in its transaction
        end(url, pid, importer)
        said = _ended(importer)
        with suppress(Exception):  # gone with the server where it was killed
            gate.commit()  # a killed client's session now ends, its transaction rolled back
    if restart:
        lab.server.start()
    wait_until_alone(url)
    as_before = every_row(url) == before
    again, same = _completed(lab, url)
    told = not says_why or _one_clean_line(said, label)
    seen = f"{_said(said)}; as before: {as_before}; again: {again}; equal to one at a time: {same}"
    return told and as_before and same, seen


def _imports_at_once(lab: Lab) -> tuple[bool, str]:
    """Both shards and the second again, released together: one takes the run's lock and
    waits at the suites, the others wait for the run (a second import that did not would
    load the run's rows as new beside the first's)."""
    from simpler.history.store import open_store

    url, _ = lab.database("at_once")
    open_store(url).close()  # the tables, to hold one of them
    with held_table(url, "suite_tests") as gate:
        importers = [_start_import(url, shard) for shard in (lab.first, lab.rest, lab.rest)]
        wait_for_waiters(url, importers)
        gate.commit()
    said = [_ended(importer) for importer in importers]
    codes = [done.returncode for done in said]
    errors = [line for done in said for line in done.stderr.strip().splitlines()[-1:]]
    same = every_row(url) == lab.tables and _flaky(url) == lab.flaky
    seen = f"exits {codes}; equal to one at a time: {same}"
    return codes == [0, 0, 0] and same, seen + "".join(f"; {line}" for line in errors[:1])


def _restarted_between_shards(lab: Lab) -> tuple[bool, str]:
    url, _ = lab.database("restarted")
    _done(_import(url, lab.first))
    lab.server.halt("fast")
    lab.server.start()
    codes = [_import(url, lab.rest).returncode]
    same = every_row(url) == lab.tables and _flaky(url) == lab.flaky
    return codes == [0] and same, f"exit {codes[0]} after the restart; equal: {same}"


# -- what the cells share -------------------------------------------------------------------


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("SIMPLER_HISTORY", None)
    return env


def _start_import(store: str, shard: Path) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "simpler", "history", "import", "--db", store, str(shard)]
    return subprocess.Popen(
        argv, cwd=ROOT, env=_env(), text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def _import(store: str, shard: Path) -> subprocess.CompletedProcess[str]:
    return _ended(_start_import(store, shard))


def _ended(process: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    stdout, stderr = process.communicate(timeout=DEADLINE_S)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def _done(imported: subprocess.CompletedProcess[str]) -> None:
    if imported.returncode != 0:
        raise RuntimeError(f"import exit {imported.returncode}: {imported.stderr.strip()}")


def _completed(lab: Lab, url: str) -> tuple[str, bool]:
    """Shard 2 imported again: its exit, and whether it exited 0 and the server holds what
    one at a time gives (every table and the flaky scores)."""
    again = _import(url, lab.rest)
    same = every_row(url) == lab.tables and _flaky(url) == lab.flaky
    return f"exit {again.returncode}", again.returncode == 0 and same


def _flaky(store: str) -> Any:
    shown = subprocess.run(
        [sys.executable, "-m", "simpler", "history", "flaky", "--db", store, "--format", "json"],
        cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=DEADLINE_S,
    )  # fmt: skip
    _done(shown)
    return json.loads(shown.stdout)


def _said(said: subprocess.CompletedProcess[str]) -> str:
    lines = said.stderr.strip().splitlines()
    return f"exit {said.returncode}, {len(lines)} line(s): {lines[-1:]}"


def _one_clean_line(said: subprocess.CompletedProcess[str], label: str) -> bool:
    """Exit 3 and one line naming the server, no traceback, the password nowhere."""
    lines = said.stderr.strip().splitlines()
    printed = said.stdout + said.stderr
    one_line = len(lines) == 1 and label in lines[0] and "Traceback" not in printed
    return said.returncode == 3 and one_line and PASSWORD not in printed


def _watch(url: str) -> Any:
    import psycopg

    return psycopg.connect(url, autocommit=True)
