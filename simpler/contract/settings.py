"""The environment variables a user sets, by name (docs/reference.md and the pages it links).

Each is read where it is used; this module names them once. A number is read with
``positive_int_env``: a bad value is a ValueError that names the variable. What ``simpler run``
tells the pytest processes it starts is ``child.py``'s; it reuses the names a user may also
set (the platform, the devices, the report, the run id, the quarantine).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = [
    "CACHE_DIR_ENV",
    "COV_SAVE_ENV",
    "CUDA_DRIVER_ENV",
    "CUDA_SPIN_MS_ENV",
    "DEADLINE_ENV",
    "DEVICES_ENV",
    "FORK_CHILDREN_ENV",
    "HISTORY_ENV",
    "JOBS_ENV",
    "JOB_ENV",
    "LOCK_DIR_ENV",
    "OP_TIMEOUT_MS_ENV",
    "PLAN_ENV",
    "PLATFORM_ENV",
    "QUARANTINE_ENV",
    "REPORT_ENV",
    "RESET_ATTEMPTS_ENV",
    "RUNNER_HEADER_ENV",
    "RUNNER_LIBRARY_ENV",
    "RUNNER_NAME_ENV",
    "RUN_ID_ENV",
    "SIM_FAULTS_ENV",
    "positive_int_env",
]

# simpler run, simpler report and the plugin in a plain pytest run.
REPORT_ENV = "SIMPLER_REPORT"  # the report file (--report, --simpler-report)
RUN_ID_ENV = "SIMPLER_RUN_ID"  # the run these phases belong to (--run-id)
QUARANTINE_ENV = "SIMPLER_QUARANTINE"  # the test quarantine file (--quarantine)
HISTORY_ENV = "SIMPLER_HISTORY"  # the history database, a path or a server URL (--history, --db)
JOBS_ENV = "SIMPLER_JOBS"  # the run's slots (-j)
DEADLINE_ENV = "SIMPLER_DEADLINE"  # when the run must be over (--deadline)
PLAN_ENV = "SIMPLER_PLAN"  # a CI matrix's plan file (--plan)
JOB_ENV = "SIMPLER_JOB"  # the job of that plan this run is (--job)
FORK_CHILDREN_ENV = "SIMPLER_FORK_CHILDREN"  # 0: children start as fresh interpreters
# The platform and the devices of a plain pytest run (--simpler-platform, --simpler-device).
PLATFORM_ENV = "SIMPLER_PLATFORM"
DEVICES_ENV = "SIMPLER_DEVICES"

# The device runtime, in every test process.
SIM_FAULTS_ENV = "SIMPLER_SIM_FAULTS"  # injected faults (--simpler-sim-fault)
OP_TIMEOUT_MS_ENV = "SIMPLER_OP_TIMEOUT_MS"  # how long an op may run before it is reaped
RESET_ATTEMPTS_ENV = "SIMPLER_RESET_ATTEMPTS"  # force reset/rebuild attempts of a worker
CUDA_SPIN_MS_ENV = "SIMPLER_CUDA_SPIN_MS"  # how long a cuda `spin` kernel runs
CUDA_DRIVER_ENV = "SIMPLER_CUDA_DRIVER"  # another NVIDIA driver library (a fake one in tests)
RUNNER_LIBRARY_ENV = "SIMPLER_RUNNER_LIBRARY"  # a runner library implementing runner.h
RUNNER_HEADER_ENV = "SIMPLER_RUNNER_HEADER"  # the header that library was built against
CACHE_DIR_ENV = "SIMPLER_CACHE_DIR"  # where the built simulator is kept
LOCK_DIR_ENV = "SIMPLER_LOCK_DIR"  # where the per-device lock files live

# The history's name for the machine that ran an imported run.
RUNNER_NAME_ENV = "SIMPLER_RUNNER"
# When a measured test process saves its coverage data: test (default), file, exit.
COV_SAVE_ENV = "SIMPLER_COV_SAVE"


def positive_int_env(name: str, default: int, environ: Mapping[str, str] = os.environ) -> int:
    text = environ.get(name, "")
    if not text:
        return default
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise ValueError(f"{name} must be a positive integer, got {text!r}")
    return int(text)
