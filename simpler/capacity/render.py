"""Write a Capacity as markdown (the sections of ``--section``) or as JSON."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from simpler.capacity.aggregate import (
    Capacity,
    SizeGroup,
    SuiteStats,
    Tally,
    backend_order,
    sorted_suites,
)
from simpler.capacity.pool import PoolResult
from simpler.capacity.sizing import unsized_reason

__all__ = ["SECTIONS", "escape_cell", "format_seconds", "render_json", "render_markdown"]

SECTIONS = ("summary", "by-device-count", "by-suite", "all")
_SUITE_COLUMNS = ("Suite", "Enabled", "Disabled", "Est. Time", "Type")


def render_markdown(capacity: Capacity, section: str, pool: PoolResult | None = None) -> str:
    """The markdown of one ``--section`` (``all``: every section), then the pool's, if any."""
    writers = _SECTION_WRITERS if section == "all" else {section: _SECTION_WRITERS[section]}
    parts = [write(capacity) for write in writers.values()]
    if pool is not None:
        parts.append(pool_section(pool))
    return "\n".join(parts)


def summary_section(capacity: Capacity) -> str:
    lines = ["## Device Count Summary", ""]
    totals = capacity.totals
    if not capacity.groups:
        return "\n".join([*lines, "_No registrations._", ""])
    backends = capacity.active_backends()
    rows = [
        _summary_row(_size_label(group.size), group.tally, backends) for group in capacity.groups
    ]
    rows.append(_summary_row("**Total**", totals, backends))
    lines += _table(["Devices", *backends, "Total", "Disabled"], rows, right=range(1, len(rows[0])))
    lines += [
        "",
        f"{totals.enabled} enabled and {totals.disabled} disabled registrations "
        f"in {len(totals.suites)} suites; est. {format_seconds(totals.est_time_s)} enabled.",
    ]
    unsized = capacity.unsized_group()
    if unsized.suites:
        lines += ["", f"### Unsized suites ({len(unsized.tally.suites)})", ""]
        lines += _unsized_table(unsized)
    return "\n".join([*lines, ""])


def by_device_count_section(capacity: Capacity) -> str:
    lines = ["## By Device Count", ""]
    if not capacity.groups:
        return "\n".join([*lines, "_No registrations._", ""])
    for group in capacity.groups:
        lines += _size_details(group)
    return "\n".join(lines)


def by_suite_section(capacity: Capacity) -> str:
    lines = ["## By Suite", ""]
    suites = capacity.all_suites()
    if not suites:
        return "\n".join([*lines, "_No registrations._", ""])
    rows = [
        [stats.suite, stats.backend, _size_label(stats.size), *_suite_numbers(stats)]
        for stats in suites
    ]
    lines += _table(["Suite", "Backend", "Devices", *_SUITE_COLUMNS[1:]], rows, right=range(2, 6))
    return "\n".join([*lines, ""])


def pool_section(pool: PoolResult) -> str:
    lines = [
        f"## Pool of {pool.pool_size} devices",
        "",
        f"The scheduler's dry run over {pool.jobs} enabled per-commit registrations: "
        f"makespan {format_seconds(pool.makespan_s)} "
        f"(lower bound {format_seconds(pool.lower_bound_s)}), "
        f"utilization {pool.utilization:.0%}.",
    ]
    if pool.unsized or pool.too_big:
        lines += [
            "",
            f"Left out: {pool.unsized} unsized, "
            f"{pool.too_big} needing more than {pool.pool_size} devices.",
        ]
    return "\n".join([*lines, ""])


_SECTION_WRITERS: dict[str, Callable[[Capacity], str]] = {
    "summary": summary_section,
    "by-device-count": by_device_count_section,
    "by-suite": by_suite_section,
}


def _unsized_table(unsized: SizeGroup) -> list[str]:
    headers = ["Suite", "Backend", "Enabled", "Disabled", "Why unsized"]
    rows = [_unsized_row(stats) for stats in sorted_suites(unsized.suites.values())]
    return _table(headers, rows, right=range(2, 4))


def _unsized_row(stats: SuiteStats) -> list[str]:
    reason = unsized_reason(stats.suite)
    return [stats.suite, stats.backend, str(stats.enabled), str(stats.disabled), reason]


def _size_details(group: SizeGroup) -> list[str]:
    tally = group.tally
    # <details> keeps a report of hundreds of suites short; the blank line after
    # <summary> is what lets GitHub render the markdown tables inside it.
    lines = [
        "<details>",
        f"<summary><b>{_size_label(group.size, long=True)}</b>: {tally.enabled} enabled, "
        f"{tally.disabled} disabled, est. {format_seconds(tally.est_time_s)}</summary>",
        "",
    ]
    for backend in group.backends():
        rows = [[stats.suite, *_suite_numbers(stats)] for stats in group.suites_of(backend)]
        lines += [f"**{escape_cell(backend)}**", ""]
        lines += _table(_SUITE_COLUMNS, rows, right=range(1, 4))
        lines.append("")
    return [*lines, "</details>", ""]


def _suite_numbers(stats: SuiteStats) -> list[str]:
    return [
        str(stats.enabled),
        str(stats.disabled),
        format_seconds(stats.est_time_s),
        stats.type_label,
    ]


def _summary_row(label: str, tally: Tally, backends: Sequence[str]) -> list[str]:
    counts = [str(tally.backends.get(backend, 0)) for backend in backends]
    return [label, *counts, str(tally.enabled), str(tally.disabled)]


def _size_label(size: int | None, *, long: bool = False) -> str:
    if size is None:
        return "Unsized"
    if not long:
        return str(size)
    return f"{size} device" if size == 1 else f"{size} devices"


def _table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, right: range = range(0)
) -> list[str]:
    """A markdown table whose columns in ``right`` (the numbers) align right."""
    aligns = ["---:" if column in right else "---" for column in range(len(headers))]
    return [_row(headers), _row(aligns, escape=False), *(_row(row) for row in rows)]


def _row(cells: Sequence[str], *, escape: bool = True) -> str:
    shown = [escape_cell(cell) if escape else cell for cell in cells]
    return "| " + " | ".join(shown) + " |"


def escape_cell(text: str) -> str:
    """Text that stays inside one markdown table cell and cannot open raw HTML.

    A pipe would split the cell and a newline would end the row; a backslash could undo the
    pipe's escape; ``<`` could open a tag (or close our ``<details>``). Emphasis characters
    are left alone: at worst they change a font, never the structure.
    """
    text = text.replace("\\", "\\\\").replace("|", "\\|")
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("\r\n", "<br>").replace("\r", "<br>").replace("\n", "<br>")


def format_seconds(seconds: float) -> str:
    """A duration the way people read it: ``4.5s``, ``12m 30s``, ``3h 05m``."""
    if seconds < 10:
        return f"{seconds:.1f}s"
    whole = round(seconds)
    if whole < 3600:
        minutes, secs = divmod(whole, 60)
        return f"{minutes}m {secs:02d}s" if minutes else f"{secs}s"
    hours, rest = divmod(whole, 3600)
    return f"{hours}h {rest // 60:02d}m"


def render_json(capacity: Capacity, pool: PoolResult | None = None) -> str:
    summary = {_size_key(group.size): _tally_json(group.tally) for group in capacity.sized_groups()}
    # "unsized" is always present, so a consumer never has to ask whether the key exists.
    summary["unsized"] = _tally_json(capacity.unsized_group().tally)
    document: dict[str, Any] = {
        "device_count_summary": summary,
        "totals": _tally_json(capacity.totals),
        "by_suite": [_suite_json(stats) for stats in capacity.all_suites()],
    }
    if pool is not None:
        document["pool"] = _pool_json(pool)
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _size_key(size: int | None) -> str:
    return "unsized" if size is None else str(size)


def _tally_json(tally: Tally) -> dict[str, Any]:
    return {
        "enabled": tally.enabled,
        "disabled": tally.disabled,
        "est_time_s": round(tally.est_time_s, 3),
        "backends": {
            name: tally.backends[name] for name in sorted(tally.backends, key=backend_order)
        },
        "suites": sorted(tally.suites),
    }


def _suite_json(stats: SuiteStats) -> dict[str, Any]:
    return {
        "suite": stats.suite,
        "backend": stats.backend,
        "device_count": stats.size,
        "enabled": stats.enabled,
        "disabled": stats.disabled,
        "est_time_s": round(stats.est_time_s, 3),
        "type": stats.type_label,
    }


def _pool_json(pool: PoolResult) -> dict[str, Any]:
    return {
        "pool_size": pool.pool_size,
        "jobs": pool.jobs,
        "makespan_s": pool.makespan_s,
        "lower_bound_s": pool.lower_bound_s,
        "utilization": pool.utilization,
        "left_out": {"unsized": pool.unsized, "too_big": pool.too_big},
    }
