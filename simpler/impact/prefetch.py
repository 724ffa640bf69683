"""The blocks of a run's measured files, found in a process of their own while the report
phase combines the run's coverage: the two take about as long, and on a machine with a free
core the map then costs little more than what the coverage costs already.

The files are known before the combine: each process's data file names what it measured.
The child writes each file's blocks to a JSON file; a file it could not read is left out, and
:func:`simpler.impact.map.build_map` reads it itself, as it reads every file without one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from simpler.impact.blocks import Block, FileBlocks, blocks_of

__all__ = ["BlocksPrefetch", "main", "measured_files"]

WAIT_S = 120  # a child that takes longer is abandoned: the map reads the files itself


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


class BlocksPrefetch:
    """A child finding the blocks of ``files``; :meth:`result` waits for them."""

    def __init__(self, files: Iterable[str]) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="simpler-blocks-")
        folder = Path(self._folder.name)
        (folder / "files").write_text("\n".join(sorted(files)), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
        # This simpler, wherever it is imported from, not the one the folder the run is in
        # would give ``python -m`` (a checkout of another version of simpler).
        here = str(Path(__file__).resolve().parents[2])
        code = f"import sys; sys.path.insert(0, {here!r}); import {__name__} as m; m.main()"
        self._child: subprocess.Popen[bytes] | None = subprocess.Popen(
            [sys.executable, "-c", code, str(folder)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def result(self) -> dict[str, FileBlocks]:
        """Each file's blocks, by its path as measured; {} when the child failed."""
        child, self._child = self._child, None
        try:
            if child is None or child.wait(timeout=WAIT_S) != 0:
                return {}
            rows = json.loads((Path(self._folder.name) / "blocks.json").read_text("utf-8"))
            return {path: FileBlocks.of([Block(*row) for row in blocks])
                    for path, blocks in rows.items()}  # fmt: skip
        except (OSError, ValueError, TypeError, subprocess.TimeoutExpired):
            return {}
        finally:
            if child is not None and child.poll() is None:
                child.kill()
                child.wait()
            self._folder.cleanup()


def main() -> None:
    """The child: the blocks of the files listed in ``argv[1]/files``, to ``blocks.json``."""
    folder = Path(sys.argv[1])
    found = {}
    for path in (folder / "files").read_text(encoding="utf-8").splitlines():
        try:
            blocks = blocks_of(Path(path).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue
        found[path] = [[b.qualname, b.checksum, b.first_line, b.last_line]
                       for b in blocks.blocks.values()]  # fmt: skip
    partial = folder / "blocks.json.partial"
    partial.write_text(json.dumps(found), encoding="utf-8")
    partial.replace(folder / "blocks.json")

