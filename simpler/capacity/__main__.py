"""``python -m simpler.capacity``: the same command as ``simpler capacity``. An entry, not a
part of the report: it sits with simpler's own entries, above every package."""

from __future__ import annotations

import sys

from simpler.cli import main

if __name__ == "__main__":
    sys.exit(main(["capacity", *sys.argv[1:]]))
