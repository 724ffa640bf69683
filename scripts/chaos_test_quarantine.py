"""Chaos cells for the test quarantine (not the device quarantine of a faulted card).

The trigger hangs on every attempt, which alone makes a run red (exit 1). Quarantined, it
still runs, hangs and poisons its worker (its victims are still recovered), and the run is
green; with the entry expired it gates again; a file with a syntax error stops the run
before any test, in one line that names the file's line. ``scripts/chaos.py`` turns each
spec below into a ``Scenario`` and runs it like every other cell.
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from typing import Any

from simpler import report

__all__ = ["QUARANTINE_SCENARIOS", "refused_checks", "write_quarantine"]

L2_FILE = "scripts/chaos_suite/test_chaos_l2.py"
TRIGGER_CLASS = f"{L2_FILE}::TestTrigger"  # a "::" prefix: the class covers its test


def _entry(expires: date, reason: str = '"hangs its card on purpose"') -> str:
    return (
        f'[[quarantine]]\nnodeid = "{TRIGGER_CLASS}"\nreason = {reason}\n'
        f'owner = "chaos"\nexpires = {expires}\n'
    )


# Keyword arguments of chaos.Scenario; ``quarantine`` is the file's text.
QUARANTINE_SCENARIOS: list[dict[str, Any]] = [
    {
        "name": "test quarantine active",
        "faults": ("hang@TestTrigger",),
        "quarantine": _entry(date.today() + timedelta(days=30)),
        "expected_rc": 0,
        "says": "1 quarantined -> exit 0",
    },
    {
        "name": "test quarantine expired",
        "faults": ("hang@TestTrigger",),
        "quarantine": _entry(date.today() - timedelta(days=1)),
        "expected_rc": 1,
        "says": "1 failed -> exit 1",
        "prints": f"{TRIGGER_CLASS}::test_launch gates again (failed)",
    },
    {
        "name": "test quarantine bad TOML",
        "faults": ("hang@TestTrigger",),
        "quarantine": _entry(date.today(), reason="unquoted words"),  # line 3
        "expected_rc": 2,
        "says": "quarantine.toml:3:",
    },
]


def write_quarantine(workdir: Path, run_id: str, text: str) -> Path:
    path = workdir / f"{run_id}-quarantine.toml"
    path.write_text(text)
    return path


def refused_checks(printed: str, report_file: Path, says: str) -> tuple[dict[str, bool], str]:
    """A run refused up front: its last line is the one ``error:`` line naming the file's
    line, and no test ran (the report holds no test record, if it exists at all)."""
    lines = printed.rstrip("\n").splitlines()
    last = lines[-1] if lines else ""
    named = last.startswith("error: simpler run: quarantine file ") and says in last
    ran = (
        [r for r in report.read(report_file) if r.get("type") == "test"]
        if (report_file.exists())
        else []
    )
    checks = {"exit code": named, "no record lost": not ran, "no cascade": True}
    checks["failures named"] = True  # nothing ran, nothing failed
    note = "" if named and not ran else f"last line {last[-90:]!r}, {len(ran)} test record(s)"
    return checks, note
