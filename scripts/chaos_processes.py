"""The processes of a chaos run: a signal sent while a Resource child runs, and the check
that no process of the run outlives it."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import psutil

__all__ = ["no_leftovers", "signal_mid_resource_phase"]


def signal_mid_resource_phase(
    orchestrator: subprocess.Popen[str], report_file: Path, signum: signal.Signals
) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and orchestrator.poll() is None:
        if _child_running(report_file):
            time.sleep(0.5)
            orchestrator.send_signal(signum)
            return
        time.sleep(0.1)


def _child_running(report_file: Path) -> bool:
    logs = report_file.parent / "logs"
    started = (
        report_file.exists() and '"phase":"resource","type":"phase"' in report_file.read_text()
    )
    return started and any("test_child_fault" in p.name for p in logs.glob("*.log"))


def no_leftovers(run_id: str, notes: list[str]) -> bool:
    """No process of the run outlives it (a few seconds' grace); those left are killed."""
    deadline = time.monotonic() + 5
    while True:
        left = [p for p in _processes_of(run_id) if p.status() != psutil.STATUS_ZOMBIE]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    if left:
        notes.append(f"{len(left)} process(es) left: {[p.pid for p in left]}")
        for process in left:
            process.kill()
    return not left


def _processes_of(run_id: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter():
        try:
            if process.environ().get("SIMPLER_RUN_ID") == run_id:
                found.append(process)
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return found
