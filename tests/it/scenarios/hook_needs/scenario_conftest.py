"""A dispatcher-style project's needs, answered by hooks: no ``runtime`` or ``device_count``
marker anywhere.

The tests copy this file into a project of their own as its ``conftest.py``. The project keeps
each class's runtime in a class attribute (``_st_runtime``) and each case's device count in a
``CASES`` table; its device worker has only ``init()`` and ``close()`` (plus its own ``run``),
plugged in through ``simpler.InitCloseRunner``. Its errors are ``RuntimeError``s with a code in
the text.

Environment: ``HOOKHW_LOG`` names a file each worker appends its ``init``/``close`` to (one
line: pid, worker id, event, runtime, device); ``HOOKHW_BAD`` makes a hook answer badly:
``count`` (a device count of 0), ``runtime`` (a runtime that is an int), ``raise`` (the
device-count hook raises).
"""

from __future__ import annotations

import itertools
import os
import re

import simpler

PLATFORM = "hookhw"
CASES = {"single": {"devices": 1}, "pair": {"devices": 2}}
_ids = itertools.count(1)


class HwWorker:
    """The project's own worker: ``init()``, ``close()`` and ``run()``, nothing else."""

    def __init__(self, device: int, runtime: str) -> None:
        self.device, self.runtime, self.id = device, runtime, next(_ids)
        self.broken = False

    def _log(self, event: str) -> None:
        if os.environ.get("HOOKHW_LOG"):
            with open(os.environ["HOOKHW_LOG"], "a") as log:
                log.write(f"{os.getpid()} {self.id} {event} {self.runtime} {self.device}\n")

    def init(self) -> None:
        self._log("init")

    def run(self, name: str) -> str:
        if self.broken:
            raise RuntimeError("rtMalloc failed with code 507899")
        if name == "fault_once" and os.environ.get("SIMPLER_ATTEMPT", "1") == "1":
            self.broken = True  # this worker is done for; a new one is clean
            raise RuntimeError("rtKernelLaunch failed with code 507046")
        return f"{name} on {self.runtime}"

    def close(self) -> None:
        self._log("close")


class HwRunner(simpler.InitCloseRunner):
    def __init__(self, runtime: str, device: int) -> None:
        super().__init__()
        self.runtime, self.device = runtime, device

    def open_worker(self) -> HwWorker:
        worker = HwWorker(self.device, self.runtime)
        worker.init()
        return worker


def pytest_simpler_create_runner(platform, runtime, device):
    return HwRunner(runtime, device) if platform == PLATFORM else None


def pytest_simpler_device_error(error):
    found = re.fullmatch(r"(\w+) failed with code (\d+)", str(error))
    if not isinstance(error, RuntimeError) or found is None:
        return None
    return simpler.DeviceRuntimeError(
        int(found[2]), found[1], str(error), device=-1, platform=PLATFORM
    )


def pytest_simpler_runtime(item):
    runtime = getattr(item.cls, "_st_runtime", None)
    if os.environ.get("HOOKHW_BAD") == "runtime" and runtime == "beta":
        return 7
    return runtime


def pytest_simpler_device_count(item):
    callspec = getattr(item, "callspec", None)
    case = callspec.params.get("case") if callspec is not None else None
    if case not in CASES:
        return None
    if os.environ.get("HOOKHW_BAD") == "raise":
        raise KeyError(case)
    if os.environ.get("HOOKHW_BAD") == "count" and case == "pair":
        return 0
    return CASES[case]["devices"]
