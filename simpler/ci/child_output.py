"""What the log shows when a Resource child ends: a status line, or under GitHub Actions the
child's whole output in a collapsed group, fenced so that it cannot issue workflow commands.
"""

from __future__ import annotations

from pathlib import Path

from simpler.ci import gha
from simpler.devices import format_devices
from simpler.scheduler.jobs import JobResult

__all__ = ["announce", "status_line"]


def status_line(result: JobResult) -> str:
    stopped = result.extra.get("deadline") or result.extra.get("interrupted")
    verdict = "PASS" if result.ok else ("STOP" if stopped else "FAIL")
    if result.timed_out:
        exit_text = "timed out"
    elif result.signal:
        exit_text = result.signal
    elif result.returncode is None:
        exit_text = "not run"
    else:
        exit_text = f"rc={result.returncode}"
    devices = format_devices(result.devices) or "-"
    return f"{verdict}  {result.label}  {exit_text} devices={devices} {result.duration_s:.1f}s"


def announce(result: JobResult) -> None:
    if not gha.is_github_actions():
        print(status_line(result), flush=True)
        return
    output = _log_text(result)
    print(gha.child_group(result, output, gha.new_stop_token()), end="", flush=True)


def _log_text(result: JobResult) -> str:
    try:
        return Path(result.log).read_text(encoding="utf-8", errors="replace") if result.log else ""
    except OSError:
        return result.tail
