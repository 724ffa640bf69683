"""``python -m simpler``: the same as the ``simpler`` command."""

import sys

if sys.argv[1:2] == ["capacity"]:
    # The capacity report reads registries only: it skips the CLI of the device phases,
    # whose imports would be most of its start-up.
    from simpler.capacity.command import main as capacity_main

    sys.exit(capacity_main(sys.argv[2:]))

from simpler.cli import main

sys.exit(main())
