"""The lines printed above the summary: what a run did to its machine rather than to its
tests (devices taken out of the rest of the run, leftover processes it stopped).

Pure: records in, text out. A notice is not a failure: the verdicts and the exit code stay
the tests'. :func:`report_text` is the whole text the report phase prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from simpler.reporting.records import DeviceRetiredRecord, LeftoverRecord, Record

__all__ = [
    "NAMED_AT_MOST",
    "describe_leftovers",
    "leftover_lines",
    "report_text",
    "retired_device_lines",
]

NAMED_AT_MOST = 20  # leftover processes named on the one line that lists them


def report_text(records: Sequence[Record], summary_text: str) -> str:
    """The notices of ``records``, then the summary (which ends with the verdict line)."""
    return "\n".join([*retired_device_lines(records), *leftover_lines(records), summary_text])


def retired_device_lines(records: Sequence[Record]) -> list[str]:
    """One line per ``device_retired`` record: the cards a run stopped using, and why."""
    lines = []
    for record in records:
        if isinstance(record, DeviceRetiredRecord):
            devices = ", ".join(map(str, record.devices))
            lines.append(
                f"*** Retired device(s) {devices} for the rest of the run: {record.reason} ***"
            )
    return lines


def leftover_lines(records: Sequence[Record]) -> list[str]:
    """The summary's lines for the ``leftover`` records among ``records`` (none: no lines)."""
    found = [r.processes for r in records if isinstance(r, LeftoverRecord)]
    lines = describe_leftovers([p for processes in found for p in processes])
    return [f"*** {lines[0]} ***", *lines[1:]] if lines else []


def describe_leftovers(processes: list[dict[str, Any]]) -> list[str]:
    """One line naming them all; then, for those whose test is known, which test and what."""
    if not processes:
        return []
    shown = processes[:NAMED_AT_MOST]
    named = [f"{p.get('name') or '?'} ({p.get('pid')})" for p in shown]
    if len(processes) > NAMED_AT_MOST:
        named.append(f"and {len(processes) - NAMED_AT_MOST} more")
    lines = [f"{len(processes)} leftover process(es) killed: {', '.join(named)}"]
    lines += [
        f"  {p.get('name') or '?'} ({p.get('pid')}) was started during {p['test']}: "
        f"{p.get('cmdline') or '?'}"
        for p in shown
        if p.get("test")
    ]
    return lines
