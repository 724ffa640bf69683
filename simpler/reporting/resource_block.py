"""The block printed last, outside any log group, when Resource-phase child jobs failed.

One job: child records in, plain text out, so that a failed child is diagnosable from the
last screen of the log: how it ended (rc, signal, timeout, or a crash before pytest's summary
line), where it ran, for how long, where its full log is, and its last lines of output.
Pure: no files, no environment. Under GitHub Actions the caller fences the block (it echoes
child output) with ``simpler.ci.gha.fenced``.
"""

from __future__ import annotations

from collections.abc import Iterable

from simpler.contract import strip_ansi
from simpler.reporting.records import ChildRecord, Record

__all__ = [
    "DEFAULT_TAIL_LINES",
    "child_failed",
    "describe_exit",
    "devices_text",
    "failed_children",
    "latest_children",
    "render_resource_failures",
    "tail_block",
]

DEFAULT_TAIL_LINES = 80
_INDENT = "    "


def latest_children(records: Iterable[Record]) -> list[ChildRecord]:
    """The last child record per label, in the order the labels first appeared.

    A label can have several records (a child re-run, report files merged); only how it
    ended the last time counts. A caller may pass the whole report or its child records.
    """
    latest: dict[str, ChildRecord] = {}
    for record in records:
        if isinstance(record, ChildRecord):
            latest[record.label] = record
    return list(latest.values())


def child_failed(child: ChildRecord) -> bool:
    return child.failed


def failed_children(records: Iterable[Record]) -> list[ChildRecord]:
    """The children whose latest record (per label) says they failed."""
    return [child for child in latest_children(records) if child_failed(child)]


def describe_exit(child: ChildRecord) -> str:
    """How a child ended, in words: ``rc=1``, ``killed by SIGSEGV``, ``timed out after 30.0 s``.

    A child that never printed pytest's summary line is named as crashed, since its own
    output then ends mid-run and would otherwise look like a cut log.
    """
    signal, returncode = child.signal, child.returncode
    if child.not_run:
        return child.not_run  # it never started: there is no exit to describe
    if child.timed_out:
        ending = f"timed out after {_seconds(child)}"
        if signal:
            ending += f", stopped with {signal}"
        return ending  # a killed child never reaches its summary line: no need to say so
    if signal:
        ending = f"killed by {signal}"
    elif returncode is None:
        ending = "rc=? (no exit status recorded)"
    else:
        ending = f"rc={returncode}"
    if child.reached_summary is False:
        ending += ", crashed before pytest's summary line"
    return ending


def devices_text(child: ChildRecord) -> str:
    if child.not_run:
        return "none (never started)"
    return ",".join(map(str, child.devices)) or "?"


def render_resource_failures(
    children: Iterable[Record], tail_lines: int = DEFAULT_TAIL_LINES
) -> str:
    """The ``*** Resource phase failed ***`` block, or ``""`` when no child failed."""
    failed = failed_children(children)
    if not failed:
        return ""
    phases = {child.phase or "resource" for child in failed}
    where = "Resource phase" if phases == {"resource"} else f"phase {', '.join(sorted(phases))}"
    lines = [f"*** {where} failed: {len(failed)} child job(s) ***", ""]
    for number, child in enumerate(failed, 1):
        lines += _child_block(number, child, tail_lines)
        lines.append("")
    return "\n".join(lines)


def _child_block(number: int, child: ChildRecord, tail_lines: int) -> list[str]:
    lines = [f"{number}) {child.label or '?'}: {describe_exit(child)}"]
    if child.nodeid:
        lines.append(f"  test: {child.nodeid}")
    lines.append(f"  devices: {devices_text(child)}, duration: {_seconds(child)}")
    lines.append(f"  log: {child.log or '(none recorded)'}")
    tail = tail_block(child.tail, tail_lines, child.log, indent="  ", empty="(none captured)")
    return lines + tail


def tail_block(
    tail: str, limit: int, log: str = "", *, indent: str = "", empty: str | None = None
) -> list[str]:
    """The last ``limit`` lines of an output under an ``output:`` header that says what was cut.

    ``empty``: what to say when nothing was captured (None: say nothing at all).
    """
    lines = strip_ansi(tail).rstrip().splitlines()
    if limit <= 0 or (not lines and empty is None):
        return []
    if not lines:
        return [f"{indent}output: {empty}"]
    shown = lines[-limit:]
    header = f"{indent}output:"
    if len(shown) < len(lines):
        where = f"; full output in {log}" if log else ""
        header = f"{indent}output (last {len(shown)} of {len(lines)} lines{where}):"
    return [header] + [f"{_INDENT}{line}" for line in shown]


def _seconds(child: ChildRecord) -> str:
    return "? s" if child.duration_s is None else f"{child.duration_s:.1f} s"
