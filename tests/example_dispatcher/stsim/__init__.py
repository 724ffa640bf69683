"""stsim: the dispatcher example's own device runtime, standing in for a team's nanobind module.

Nothing here knows simpler. ``StWorker`` has ``init()``, ``run()`` and ``close()``; a failed
device call raises a plain ``RuntimeError`` whose text carries the API and the code.
"""

from stsim.worker import KERNELS, PLATFORMS, StL3Worker, StWorker, open_worker

__all__ = ["KERNELS", "PLATFORMS", "StL3Worker", "StWorker", "open_worker"]
