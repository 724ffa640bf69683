"""What ``simpler run`` tells each pytest process it starts, as one frozen ``ChildContract``.

It crosses in the environment, so a process's xdist workers and whatever its tests start are
told the same: the orchestrator writes it (``to_env``), the plugin reads it once per session
(``from_env``); no other channel carries these values (docs/design.md, Phases). The
names a user may also set (the platform, the devices, the report, the run id, the quarantine)
are the user settings' (``settings.py``); a variable the contract does not know is ignored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from simpler.contract import DEADLINE_AT_ENV, DURATIONS_ENV, NO_DEVICE_SPEC, TEST_PHASES
from simpler.contract.settings import (
    DEVICES_ENV,
    PLATFORM_ENV,
    QUARANTINE_ENV,
    REPORT_ENV,
    RUN_ID_ENV,
    positive_int_env,
)

__all__ = [
    "ATTEMPT_ENV",
    "COVERAGE_CONFIG_ENV",
    "COV_CONTEXT_ENV",
    "COV_LABEL_ENV",
    "COV_WORKERS_ENV",
    "PHASE_ENV",
    "ChildContract",
    "ChildCoverage",
    "ChildDeadline",
    "devices_value",
    "run_wide_env",
    "started_by_run",
]

PHASE_ENV = "SIMPLER_PHASE"  # set: a process of the run (the plugin is active)
ATTEMPT_ENV = "SIMPLER_ATTEMPT"  # 1-based; a retry's are 2 and up
COV_LABEL_ENV = "SIMPLER_COV_LABEL"  # the process's name in the run's coverage records
# An xdist controller's: the config its workers measure themselves with. The controller runs
# no test, so it is not measured: it hands this to its workers as COVERAGE_CONFIG_ENV.
COV_WORKERS_ENV = "SIMPLER_COV_WORKERS"
COV_CONTEXT_ENV = "SIMPLER_COV_CONTEXT"  # "test": switch contexts per test
# coverage.py's own: its .pth file starts measuring every process that has it.
COVERAGE_CONFIG_ENV = "COVERAGE_PROCESS_CONFIG"

# What names one process of the run, not the run: a process that only forks the run's
# children (the warm process) keeps none of it.
_ONE_PROCESS = (PHASE_ENV, DEVICES_ENV, ATTEMPT_ENV, COV_LABEL_ENV, COV_WORKERS_ENV,
                COVERAGE_CONFIG_ENV)  # fmt: skip


@dataclass(frozen=True)
class ChildCoverage:
    """A measured process: its name in the run's coverage, and what it measures with."""

    label: str
    config: str  # coverage.py's serialized config
    workers_only: bool = False  # an xdist controller: the config is its workers', not its own
    context: str = ""  # "test": each test's lines under a context of their own


@dataclass(frozen=True)
class ChildDeadline:
    """``--deadline``: when the process's tests must be over, and what they took before."""

    tests_end_at: float  # epoch seconds
    durations: str  # the learned durations file; "": none


@dataclass(frozen=True)
class ChildContract:
    """What one pytest process of a run is told. An empty text is not told."""

    run_id: str = ""
    phase: str = ""  # one of TEST_PHASES; "": not a process of a run
    attempt: int = 1  # told with the phase
    platform: str = ""
    # A device spec (``4,5``, or ``none``: it holds no device); "": not told here (the
    # scheduler tells a process it places, ``devices_value``).
    devices: str = ""
    report: str = ""
    quarantine: str | None = None  # the run's quarantine file; "": none; None: not told
    coverage: ChildCoverage | None = None
    deadline: ChildDeadline | None = None

    def to_env(self) -> dict[str, str]:
        """The variables that tell a process this contract (to go over its inherited ones)."""
        texts = {RUN_ID_ENV: self.run_id, PHASE_ENV: self.phase, PLATFORM_ENV: self.platform,
                 DEVICES_ENV: self.devices, REPORT_ENV: self.report}  # fmt: skip
        env = {name: text for name, text in texts.items() if text}
        if self.phase:
            env[ATTEMPT_ENV] = str(self.attempt)
        if self.quarantine is not None:
            env[QUARANTINE_ENV] = self.quarantine
        if self.coverage is not None:
            config_env = COV_WORKERS_ENV if self.coverage.workers_only else COVERAGE_CONFIG_ENV
            env[config_env] = self.coverage.config
            env[COV_LABEL_ENV] = self.coverage.label
            if self.coverage.context:
                env[COV_CONTEXT_ENV] = self.coverage.context
        if self.deadline is not None:
            env[DEADLINE_AT_ENV] = f"{self.deadline.tests_end_at:.3f}"
            env[DURATIONS_ENV] = self.deadline.durations
        return env

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> ChildContract:
        """What ``environ`` tells; a value that cannot be one is a ValueError naming it."""
        phase = environ.get(PHASE_ENV, "")
        if phase and phase not in TEST_PHASES:
            raise ValueError(f"{PHASE_ENV} must be one of {', '.join(TEST_PHASES)}, got {phase!r}")
        return cls(
            run_id=environ.get(RUN_ID_ENV, ""),
            phase=phase,
            attempt=positive_int_env(ATTEMPT_ENV, 1, environ),
            platform=environ.get(PLATFORM_ENV, ""),
            devices=environ.get(DEVICES_ENV, ""),
            report=environ.get(REPORT_ENV, ""),
            quarantine=environ.get(QUARANTINE_ENV),
            coverage=_coverage(environ),
            deadline=_deadline(environ),
        )


def _coverage(environ: Mapping[str, str]) -> ChildCoverage | None:
    label = environ.get(COV_LABEL_ENV, "")
    if not label:
        return None
    workers = environ.get(COV_WORKERS_ENV)
    config = workers if workers is not None else environ.get(COVERAGE_CONFIG_ENV, "")
    context = environ.get(COV_CONTEXT_ENV, "")
    return ChildCoverage(label, config, workers_only=workers is not None, context=context)


def _deadline(environ: Mapping[str, str]) -> ChildDeadline | None:
    text = environ.get(DEADLINE_AT_ENV, "")
    if not text:
        return None
    try:
        ends_at = float(text)
    except ValueError:
        raise ValueError(f"{DEADLINE_AT_ENV} must be epoch seconds, got {text!r}") from None
    return ChildDeadline(ends_at, environ.get(DURATIONS_ENV, ""))


def started_by_run(environ: Mapping[str, str]) -> bool:
    """A process of a run (or one its tests started): it was told a phase. Reads nothing else,
    so it never refuses."""
    return bool(environ.get(PHASE_ENV))


def devices_value(ids: Sequence[int]) -> str:
    """How a process placed on ``ids`` is told them: ``4,5``; ``none`` for no device."""
    return ",".join(map(str, ids)) if ids else NO_DEVICE_SPEC


def run_wide_env(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` less what names one process of the run (its phase, devices, attempt and
    coverage): what a process that forks the run's children keeps."""
    return {name: value for name, value in environ.items() if name not in _ONE_PROCESS}
