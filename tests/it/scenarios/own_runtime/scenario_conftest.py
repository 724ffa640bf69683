"""A project's own runtime, plugged in through simpler's two conftest hooks.

The tests copy this file into a project of their own as its ``conftest.py`` (here it must
not be one: the project's own run would load it).

``FakeHwRunner`` stands for a team's nanobind worker: plain Python, its own API (``run``),
its own exceptions (``RuntimeError("... failed with code N")``). The card's state lives in
this module, so it is per process: a fresh process finds a clean card.

Environment: ``MYHW_RESET=broken`` makes ``force_reset`` fail and leave the card sticky;
``MYHW_TRANSLATE=raise`` makes ``pytest_simpler_device_error`` itself raise.
"""

from __future__ import annotations

import os
import re

import simpler

PLATFORM = "myhw"
CARDS: dict[int, dict[str, bool]] = {}  # device -> {"sticky": ...}


class FakeHwRunner:
    def __init__(self, device: int, runtime: str) -> None:
        self.device = device
        self.runtime = runtime
        self.card = CARDS.setdefault(device, {"sticky": False})
        self.inited = False
        self.closed = False

    @property
    def unusable(self) -> bool:
        return self.card["sticky"]

    def _check(self, where: str) -> None:
        if self.card["sticky"]:
            raise RuntimeError(f"{where} failed with code 507899")

    def init(self) -> None:
        self._check("rtMalloc")
        self.inited = True

    def run(self, name: str, *args: object, **options: object) -> object:
        self._check("rtMalloc")
        first_attempt = os.environ.get("SIMPLER_ATTEMPT", "1") == "1"
        if name == "fault" or (name == "fault_once" and first_attempt):
            self.card["sticky"] = True  # every later call fails, as on a real card
            raise RuntimeError("rtMalloc failed with code 507899")
        return (name, *args, options) if options else (name, *args)

    def probe(self) -> bool:
        return not self.card["sticky"]

    def force_reset(self) -> None:
        if os.environ.get("MYHW_RESET") == "broken":
            raise RuntimeError("rtDeviceReset failed with code 507033")
        self.card["sticky"] = False

    def finalize(self) -> int:
        return 507899 if self.card["sticky"] else 0

    def close(self) -> None:
        self.closed = True


def pytest_simpler_create_runner(platform: str, runtime: str, device: int) -> FakeHwRunner | None:
    if platform != PLATFORM:
        return None
    return FakeHwRunner(device, runtime)


def pytest_simpler_device_error(error: BaseException) -> simpler.DeviceRuntimeError | None:
    if os.environ.get("MYHW_TRANSLATE") == "raise":
        raise ValueError("translator broken")
    found = re.fullmatch(r"(\w+) failed with code (\d+)", str(error))
    if not isinstance(error, RuntimeError) or found is None:
        return None
    where, rc = found.group(1), int(found.group(2))
    return simpler.DeviceRuntimeError(rc, where, str(error), device=-1, platform=PLATFORM)
