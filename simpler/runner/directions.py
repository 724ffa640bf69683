"""Which way a launch's array flows: ``Out(array)`` and ``InOut(array)``.

Kept apart from the packing so ``simpler.runner`` exports them without
importing numpy: commands that touch no device start fast.
"""

from __future__ import annotations

from typing import Any

__all__ = ["IN", "INOUT", "OUT", "Directed", "InOut", "Out"]

# runner.h's simpler_direction values.
IN, OUT, INOUT = 1, 2, 3


class Directed:
    """An array marked with the direction runner.h's ``simpler_tensor`` carries."""

    direction = IN

    def __init__(self, array: Any) -> None:
        import numpy as np  # the caller has numpy already: it built the array

        if not isinstance(array, np.ndarray):
            raise TypeError(
                f"{type(self).__name__}() takes a numpy.ndarray, got {type(array).__name__}"
            )
        self.array = array

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.array.dtype}{list(self.array.shape)})"


class Out(Directed):
    """Marks an array the kernel writes (runner.h ``SIMPLER_OUT``); ``run`` returns it."""

    direction = OUT


class InOut(Directed):
    """Marks an array the kernel reads and updates in place (``SIMPLER_INOUT``); returned too."""

    direction = INOUT
