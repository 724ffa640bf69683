"""What the learned durations say of a run against its deadline, said once at its start.

The prediction is a lower bound of the test phases' wall on the run's devices: the L2 files'
learned seconds spread over the devices, and the Resource tests' device-seconds likewise.
Tests never measured count as nothing, so a first run predicts nothing and says nothing.
"""

from __future__ import annotations

from simpler.base.nodeids import file_of
from simpler.orchestrator.context import RunSetup
from simpler.scheduler.durations import load_durations

__all__ = ["predicted_s", "warn_if_too_long"]


def predicted_s(setup: RunSetup, phases: list[str]) -> float:
    learned = load_durations(setup.durations_file)
    devices = max(len(setup.devices), 1)
    total = 0.0
    if "l2" in phases and setup.l2_tests is not None:
        files = dict.fromkeys(file_of(nodeid) for nodeid in setup.l2_tests)
        total += sum(learned.get(f"file:{path}", 0.0) for path in files) / devices
    if "resource" in phases and setup.resource_tests:
        tests = setup.resource_tests
        device_seconds = sum(learned.get(t.nodeid, t.est_s or 0.0) * t.devices for t in tests)
        total += device_seconds / devices
    return total


def warn_if_too_long(setup: RunSetup, phases: list[str]) -> None:
    """One line when the learned durations say the tests cannot all run before the deadline."""
    deadline = setup.deadline
    if deadline is None:
        return
    needs = predicted_s(setup, phases)
    if needs > deadline.left_s():
        print(
            f"simpler: this run needs ~{_minutes(needs)} on {len(setup.devices)} device(s); "
            f"the deadline is {deadline.text}: the tests that cannot finish by then will not start",
            flush=True,
        )


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"
