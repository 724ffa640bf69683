"""The chaos matrix (issue 6): not built yet."""

import sys

print("nox -s chaos: the fault matrix is not built yet", file=sys.stderr)
sys.exit(1)
