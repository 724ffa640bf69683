"""``python -m simpler.capacity``: the same command as ``simpler capacity``."""

from __future__ import annotations

import sys

from simpler.capacity.command import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
