"""simpler: a test orchestrator for device (NPU/GPU) test suites.

Importing the package is cheap: the C++ runner (and cppyy) load only when a device is
opened, through ``simpler.runner``. PYTEST_DONT_REWRITE: simpler's asserts are invariants,
not test assertions, and pytest would warn that the package was imported before it could
rewrite them (as it is in the warm process children fork from).
"""

from simpler.errors import DeviceRuntimeError, GoldenMismatch
from simpler.init_close import InitCloseRunner

__all__ = ["DeviceRuntimeError", "GoldenMismatch", "InitCloseRunner"]
__version__ = "0.1.0"
