"""simpler: a test orchestrator for device (NPU/GPU) test suites.

Importing the package is cheap: the C++ runner (and cppyy) load only when a
device is opened, through ``simpler.runner``.

PYTEST_DONT_REWRITE: pytest rewrites the asserts of a plugin's package, and warns when the
package was imported first, as it is in the warm process that simpler's children fork from;
simpler's own asserts are invariants, not test assertions, and need no rewriting.
"""

from simpler.errors import DeviceRuntimeError, GoldenMismatch
from simpler.init_close import InitCloseRunner

__all__ = ["DeviceRuntimeError", "GoldenMismatch", "InitCloseRunner"]
__version__ = "0.1.0"
