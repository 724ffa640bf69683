"""How integration tests start processes: `python -m` lines, and `simpler run` as users type it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from typing import Any

import psutil

from simpler import report

__all__ = [
    "ROOT",
    "SimplerRun",
    "SimplerRunner",
    "python_m",
    "run_python_m",
    "sim_faults",
    "simpler_env",
]

ROOT = Path(__file__).resolve().parents[2]
# What an outer `simpler run` (the project's own scene suite) hands its tests: a run started
# here must open a run and a report of its own, never write records into the outer one's.
OUTER_RUN = ("SIMPLER_RUN_ID", "SIMPLER_REPORT")


def python_m(module: str, *args: str) -> list[str]:
    """The command line of ``python -m module args`` on this test's own interpreter."""
    return [sys.executable, "-m", module, *args]


def run_python_m(
    module: str,
    *args: str,
    cwd: Path = ROOT,
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """``python -m module args`` to its end, output captured as text; ``simpler_env()`` unless
    ``env`` is given, which is then the child's whole environment."""
    return subprocess.run(
        python_m(module, *args),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=simpler_env() if env is None else env,
    )


def simpler_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment, without the outer run's, a short op timeout, then ``extra``."""
    inherited = {key: value for key, value in os.environ.items() if key not in OUTER_RUN}
    return {**inherited, "SIMPLER_OP_TIMEOUT_MS": "150", **(extra or {})}


def sim_faults(*specs: str) -> tuple[str, ...]:
    """``--simpler-sim-fault`` once per spec, as a user lists several faults."""
    return tuple(arg for spec in specs for arg in ("--simpler-sim-fault", spec))


@dataclass
class SimplerRun:
    returncode: int
    stdout: str
    stderr: str
    report: Path

    def records(self, record_type: str | None = None, **match: Any) -> list[dict[str, Any]]:
        if not self.report.exists():
            return []
        return [
            r
            for r in report.read(self.report)
            if (record_type is None or r["type"] == record_type)
            and all(r.get(k) == v for k, v in match.items())
        ]

    def outcomes(self, phase: str) -> dict[str, str]:
        return {r["nodeid"]: r["outcome"] for r in self.records("test", phase=phase)}


class SimplerRunner:
    """Runs ``python -m simpler`` to its end; each ``run`` gets a report file of its own."""

    def __init__(self, reports: Path) -> None:
        self._reports = reports
        self._numbers = count()

    def __call__(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        timeout: float = 300,
        cwd: Path = ROOT,
    ) -> SimplerRun:
        path = self._next_report()
        child = subprocess.run(
            python_m("simpler", *_with_report(list(args), path)),
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=simpler_env(env),
        )
        return SimplerRun(child.returncode, child.stdout, child.stderr, path)

    def interrupt(
        self,
        *args: str,
        when: Callable[[Path], bool],
        signum: signal.Signals = signal.SIGINT,
        env: dict[str, str] | None = None,
        wait_s: float = 60,
    ) -> tuple[SimplerRun, list[psutil.Process]]:
        """Starts ``python -m simpler args``, sends ``signum`` once ``when(report path)`` holds,
        and waits for its end; also the processes that were below it at the signal."""
        path = self._next_report()
        # Device locks of its own: another run on this host must not delay the signal's moment.
        locks = {"SIMPLER_LOCK_DIR": str(self._reports / "locks")}
        child = subprocess.Popen(
            python_m("simpler", *_with_report(list(args), path)),
            cwd=ROOT,
            env=simpler_env({**locks, **(env or {})}),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + wait_s  # a hang guard: the event is `when`
            while not when(path) and child.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            ended = child.poll() is not None  # then `when` never held: the test says so
            below = [] if ended else psutil.Process(child.pid).children(recursive=True)
            child.send_signal(signum)
            out, err = child.communicate(timeout=wait_s)
        finally:
            child.kill()
        return SimplerRun(child.returncode, out, err, path), below

    def suite(
        self,
        *pytest_args: str,
        device: str = "0-1",
        platform: str = "a5sim",
        options: tuple[str, ...] = (),
        **how: Any,
    ) -> SimplerRun:
        """``simpler run --platform a5sim --device 0-1 [options] -- pytest_args``."""
        run_args = ("run", "--platform", platform, "--device", device, *options)
        return self(*run_args, "--", *pytest_args, **how)

    def _next_report(self) -> Path:
        return self._reports / f"report-{next(self._numbers)}.jsonl"


def _with_report(args: list[str], path: Path) -> list[str]:
    if args and args[0] == "run" and "--report" not in args:
        return [args[0], "--report", str(path), *args[1:]]
    return args
