"""``python -m simpler``: the same as the ``simpler`` command."""

import sys

from simpler.cli import main

sys.exit(main())
