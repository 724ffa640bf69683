"""Write a Capacity as markdown: the sections of ``--section``, then the pools, if any."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from simpler.capacity.aggregate import (
    Capacity,
    Schedules,
    SizeGroup,
    SuiteStats,
    Tally,
    sorted_suites,
)
from simpler.capacity.model import suite_label
from simpler.capacity.sizing import unsized_reason

if TYPE_CHECKING:  # the pool module imports the scheduler: only --pool needs it at run time
    from simpler.capacity.pool import PoolResult

__all__ = [
    "escape_cell",
    "format_hours",
    "format_seconds",
    "pool_section",
    "render_markdown",
]

_SUITE_COLUMNS = ("Suite", "Enabled", "Disabled", "Est. Time", "Type")
_SPLIT_COLUMNS = ("Per-commit", "Nightly", "Per-commit device-h", "Nightly device-h")


def render_markdown(capacity: Capacity, section: str, pools: Sequence[PoolResult] = ()) -> str:
    """The markdown of one ``--section`` (``all``: every section), then the pools', if any."""
    writers = _SECTION_WRITERS if section == "all" else {section: _SECTION_WRITERS[section]}
    parts = [write(capacity) for write in writers.values()]
    parts += [pool_section(pool) for pool in pools]
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
    schedules = totals.schedules
    lines += [
        "",
        f"{totals.enabled} enabled and {totals.disabled} disabled registrations "
        f"in {len(totals.suites)} suites; est. {format_seconds(totals.est_time_s)} enabled.",
        "",
        f"Per commit: {schedules.per_commit.count} registrations, "
        f"{format_hours(schedules.per_commit.device_hours)} device-hours. "
        f"Nightly: {schedules.nightly.count} registrations, "
        f"{format_hours(schedules.nightly.device_hours)} device-hours.",
        "",
        "### Per commit and nightly",
        "",
    ]
    lines += _split_table(capacity)
    lines += [
        "",
        "Device-hours are est. time times devices over enabled registrations; "
        "unsized ones have no device count and add none.",
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
        [suite_label(stats.suite), stats.backend, _size_label(stats.size), *_suite_numbers(stats)]
        for stats in suites
    ]
    # Hundreds of rows: folded like the drill-down, so the summary above stays in view.
    lines += [
        "<details>",
        f"<summary>{len(rows)} suites per backend, by device count then name</summary>",
        "",
    ]
    lines += _table(["Suite", "Backend", "Devices", *_SUITE_COLUMNS[1:]], rows, right=range(2, 6))
    return "\n".join([*lines, "", "</details>", ""])


def pool_section(pool: PoolResult) -> str:
    backend = f" for {escape_cell(pool.backend)}" if pool.backend is not None else ""
    lines = [
        f"## Pool of {pool.pool_size} devices{backend}, {pool.schedule}",
        "",
        f"The scheduler's dry run over {pool.jobs} enabled {pool.schedule} registrations: "
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


def _split_table(capacity: Capacity) -> list[str]:
    """Per size and backend: what runs per commit and at night, in counts and device-hours."""
    rows = []
    for group in capacity.groups:
        size = _size_label(group.size)
        for backend in capacity.active_backends():
            schedules = group.tally.backend_schedules.get(backend)
            if schedules is not None:
                rows.append([size, backend, *_split_cells(schedules, unsized=group.size is None)])
    # The total's device-hours are the sized ones': unsized registrations add none.
    rows.append(["**Total**", "", *_split_cells(capacity.totals.schedules, unsized=False)])
    return _table(["Devices", "Backend", *_SPLIT_COLUMNS], rows, right=range(2, 6))


def _split_cells(schedules: Schedules, *, unsized: bool) -> list[str]:
    per_commit, nightly = schedules.per_commit, schedules.nightly
    if unsized:
        hours = ["n/a", "n/a"]
    else:
        hours = [format_hours(per_commit.device_hours), format_hours(nightly.device_hours)]
    return [str(per_commit.count), str(nightly.count), *hours]


def _unsized_table(unsized: SizeGroup) -> list[str]:
    headers = ["Suite", "Backend", "Enabled", "Disabled", "Why unsized"]
    rows = [_unsized_row(stats) for stats in sorted_suites(unsized.suites.values())]
    return _table(headers, rows, right=range(2, 4))


def _unsized_row(stats: SuiteStats) -> list[str]:
    reason = unsized_reason(stats.suite)
    label = suite_label(stats.suite)
    return [label, stats.backend, str(stats.enabled), str(stats.disabled), reason]


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
        rows = [
            [suite_label(stats.suite), *_suite_numbers(stats)] for stats in group.suites_of(backend)
        ]
        lines += [f"**{escape_cell(backend)}**", ""]
        lines += _table(_SUITE_COLUMNS, rows, right=range(1, 4))
        lines.append("")
    lines += _disabled_table(group)
    return [*lines, "</details>", ""]


def _disabled_table(group: SizeGroup) -> list[str]:
    """Why each disabled registration is off: what a CI owner has to chase."""
    rows = [
        [suite_label(stats.suite), stats.backend, filename, reason]
        for stats in sorted_suites(group.suites.values())
        for filename, reason in sorted(stats.disabled_reasons)
    ]
    if not rows:
        return []
    return [
        f"**Disabled ({len(rows)})**",
        "",
        *_table(["Suite", "Backend", "File", "Reason"], rows),
        "",
    ]


def _suite_numbers(stats: SuiteStats) -> list[str]:
    return [
        str(stats.enabled),
        str(stats.disabled),
        format_seconds(stats.est_time_s),
        stats.type_cell,
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


def format_hours(hours: float) -> str:
    """Device-hours with the precision a capacity plan needs: ``0.25``, ``12.5``, ``1,234``."""
    if hours >= 100:
        return f"{hours:,.0f}"
    if hours >= 10:
        return f"{hours:.1f}"
    return f"{hours:.2f}"
