"""The run's impact map built and kept in a process of its own, beside the report phase's
combine and report of the run's coverage, which take about as long (docs/affected.md, "The map").

It starts with the report phase, finds the blocks of the files the run's processes measured,
then, told the combined data file, builds the map, keeps it and writes the line that says
what was kept, or why nothing was.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Iterable
from pathlib import Path

from simpler.impact.kernel_sources import Launches
from simpler.impact.run_map import MapTarget

__all__ = ["MapChild", "main", "measured_files"]

WAIT_S = 600  # a map of a suite of thousands of tests is seconds: this is a hang


def measured_files(data_files: Iterable[Path]) -> set[str]:
    """The files the processes' data files measured (a file that is no data is skipped)."""
    from coverage import CoverageData

    files: set[str] = set()
    for path in data_files:
        data = CoverageData(basename=str(path))
        try:
            data.read()
            files.update(data.measured_files())
        except Exception:  # coverage.py raises its own DataError, and sqlite3's
            continue
        finally:
            data.close()
    return files


class MapChild:
    """A child keeping the map of the run for ``target``: :meth:`combined` tells it the
    combined data, :meth:`line` waits for what it kept."""

    def __init__(self, target: MapTarget, launches: Launches, files: Iterable[str]) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="simpler-map-")  # private: 0700
        folder = Path(self._folder.name)
        job = {
            "history": target.history,
            "commit": target.commit,
            "root": str(target.root),
            "beside": str(target.beside),
            "launches": {n: {k: list(s) for k, s in ks.items()} for n, ks in launches.items()},
            "files": sorted(files),
        }
        (folder / "job.json").write_text(json.dumps(job), encoding="utf-8")
        # This simpler, wherever it is imported from, not the one the folder the run is in
        # would give ``python -m`` (a checkout of another version of simpler).
        here = str(Path(__file__).resolve().parents[2])
        code = f"import sys; sys.path.insert(0, {here!r}); import {__name__} as m; m.main()"
        env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
        self._child = subprocess.Popen(
            [sys.executable, "-c", code, str(folder)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self._told = False

    def combined(self, data_file: Path) -> None:
        """The run's combined coverage is in ``data_file``: build the map from it."""
        self._tell(str(data_file))

    def line(self) -> str:
        """What was kept; RuntimeError with what went wrong when nothing was."""
        folder = Path(self._folder.name)
        try:
            self._tell("")  # never told of a combined file: the child ends, keeping nothing
            try:
                code = self._child.wait(timeout=WAIT_S)
            except subprocess.TimeoutExpired:
                self._child.kill()
                self._child.wait()
                raise RuntimeError(f"building it took more than {WAIT_S} s") from None
            for name in ("line.txt", "error.txt"):
                if (folder / name).is_file():
                    said = (folder / name).read_text(encoding="utf-8").strip()
                    if name == "line.txt" and code == 0:
                        return said
                    raise RuntimeError(said.splitlines()[0] if said else f"ended with {code}")
            raise RuntimeError(f"the process that builds it ended with {code}")
        finally:
            self._folder.cleanup()

    def _tell(self, data_file: str) -> None:
        if self._told:
            return
        self._told = True
        try:
            assert self._child.stdin is not None
            self._child.stdin.write(data_file + "\n")
            self._child.stdin.close()
        except OSError:
            pass  # it ended already: line() says how


def main() -> None:
    """The child: the blocks of the job's files (``argv[1]/job.json``), then, told the
    combined data file on stdin, the map kept and its line in ``line.txt``."""
    from simpler.impact.map import blocks_of_files
    from simpler.impact.run_map import save_run_map
    from simpler.impact.store import Environment

    folder = Path(sys.argv[1])
    try:
        job = json.loads((folder / "job.json").read_text(encoding="utf-8"))
        known = blocks_of_files(job["files"])
        Environment.here()  # read while the coverage is combined (cached): the same at the save
        data_file = sys.stdin.readline().strip()
        if not data_file:
            raise RuntimeError("the run measured nothing")
        target = MapTarget(job["history"], job["commit"], Path(job["root"]), Path(job["beside"]))
        launches = {n: {k: tuple(s) for k, s in ks.items()} for n, ks in job["launches"].items()}
        line = save_run_map(Path(data_file), target, launches, known)
    except Exception as error:  # the history, the disk, the data: said by the parent, exit 3
        (folder / "error.txt").write_text(f"{error}\n{traceback.format_exc()}", encoding="utf-8")
        sys.exit(1)
    (folder / "line.txt").write_text(line, encoding="utf-8")
