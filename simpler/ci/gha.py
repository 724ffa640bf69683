"""GitHub Actions workflow commands for the end of a run; used only when ``GITHUB_ACTIONS=true``.

One job: turn what the summary and the Resource phase already know into Actions markup —
collapsible groups of child output, fences that stop that output from issuing workflow
commands of its own, error annotations (capped), and a markdown step summary kept under
GitHub's 1 MiB limit. Functions return text; the caller prints it (or appends it to the
step summary file), so nothing here decides where output goes.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from simpler.ci import step_summary
from simpler.ci.step_summary import STEP_SUMMARY_LIMIT, StepSummaryUnwritable
from simpler.contract import strip_ansi
from simpler.reporting import tables
from simpler.reporting.failure_block import failure_headline
from simpler.reporting.last_screen import INDEX_CAP, index_entry, nothing_ran_reason, skip_groups
from simpler.reporting.records import ChildRecord
from simpler.reporting.summary import Summary
from simpler.reporting.verdicts import Failure
from simpler.scheduler.jobs import JobResult

__all__ = [
    "ANNOTATION_CAP",
    "STEP_SUMMARY_CUT_NOTICE",
    "STEP_SUMMARY_LIMIT",
    "StepSummaryUnwritable",
    "append_step_summary",
    "child_group",
    "child_status",
    "commands_stopped_while_streaming",
    "error_annotations",
    "escape_data",
    "escape_property",
    "fenced",
    "group_end",
    "group_start",
    "is_github_actions",
    "new_stop_token",
    "nothing_ran_annotation",
    "step_summary_markdown",
    "workflow_command",
]

# GitHub shows at most 10 error annotations per step; more would be dropped silently.
ANNOTATION_CAP = 10
STEP_SUMMARY_CUT_NOTICE = (
    "> **Note:** this summary was cut here to stay under GitHub's 1 MiB step summary limit; "
    "the summary at the end of the job log and `simpler report` give all of it."
)
_FENCE = "```text"  # a code block: node ids and messages need no markdown escaping


def is_github_actions(env: Mapping[str, str] = os.environ) -> bool:
    return env.get("GITHUB_ACTIONS") == "true"


# --- workflow command syntax -------------------------------------------------------------


def escape_data(text: str) -> str:
    """Escape a workflow command's message, so a newline cannot end the command early."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a property value: also ``:`` and ``,``, which delimit properties."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(name: str, data: str = "", properties: Mapping[str, str] | None = None) -> str:
    props = ",".join(f"{key}={escape_property(value)}" for key, value in (properties or {}).items())
    return f"::{name}{' ' + props if props else ''}::{escape_data(data)}"


# --- stop-commands fence -----------------------------------------------------------------


def new_stop_token() -> str:
    """A token nobody can guess; take a fresh one for every echo of child output."""
    return secrets.token_hex(16)


def fenced(text: str, token: str) -> str:
    """``text`` between ``::stop-commands::`` and its end marker: lines inside it that look
    like workflow commands (``::error::``, ``::endgroup::``, ``::add-mask::``) stay text."""
    if not re.fullmatch(r"[0-9A-Za-z_-]{8,}", token):
        raise ValueError("stop-commands token must be 8+ letters, digits, '_' or '-'")
    if f"::{token}::" in text:
        # Whoever wrote this output knows the token and could end the fence from inside it.
        raise ValueError("output to fence already contains the stop-commands end marker")
    body = text if not text or text.endswith("\n") else text + "\n"
    return f"::stop-commands::{token}\n{body}::{token}::\n"


@contextmanager
def commands_stopped_while_streaming() -> Iterator[None]:
    """Under GitHub Actions, fence whatever a foreground child prints to our stdout meanwhile.

    Elsewhere it prints nothing. The end marker starts a line of its own even when the
    child's last line was cut short, or the fence would never close.
    """
    if not is_github_actions():
        yield
        return
    token = new_stop_token()
    print(f"::stop-commands::{token}", flush=True)
    try:
        yield
    finally:
        print(f"\n::{token}::", flush=True)


# --- groups of child output --------------------------------------------------------------


def group_start(label: str, status: str) -> str:
    return f"::group::{escape_data(label)} [{escape_data(status)}]"


def group_end() -> str:
    return "::endgroup::"


def child_status(child: JobResult | ChildRecord) -> str:
    """``PASS rc=0 devices=4,5``, ``FAIL signal=SIGSEGV devices=4,5``, ``FAIL timeout ...``."""
    return tables.child_status(_as_record(child))


def child_group(child: JobResult | ChildRecord, output_text: str, token: str) -> str:
    """A child's output as one collapsible group, fenced so it cannot issue commands."""
    label = _as_record(child).label or "?"
    return f"{group_start(label, child_status(child))}\n{fenced(output_text, token)}{group_end()}\n"


# --- annotations -------------------------------------------------------------------------


def error_annotations(failures: Sequence[Failure], cap: int = ANNOTATION_CAP) -> list[str]:
    """One ``::error`` per unrecovered failure, at most ``cap``, then one ``::notice`` for
    the rest (they are all in the summary at the end of the log)."""
    lines = [_annotation(failure) for failure in failures[: max(cap, 0)]]
    rest = len(failures) - len(lines)
    if rest > 0:
        lines.append(
            workflow_command(
                "notice",
                f"{rest} more failure(s) not annotated (at most {cap} are); "
                "the summary at the end of the log lists all of them",
                {"title": "More failures"},
            )
        )
    return lines


def nothing_ran_annotation(summary: Summary) -> str | None:
    """A ``::warning`` when no test ran (all skipped, or none selected); else None."""
    if not summary.nothing_ran:
        return None
    message = nothing_ran_reason(summary.completeness)
    return workflow_command("warning", message, {"title": "Nothing ran"})


def _annotation(failure: Failure) -> str:
    if failure.child is not None:
        message = tables.child_annotation(failure.child)
        return workflow_command("error", message, {"title": "Resource phase failed"})
    if failure.kind == "phase":
        return workflow_command("error", failure_headline(failure), {"title": "Phase failed"})
    return workflow_command("error", failure_headline(failure), {"title": "Test failed"})


# --- step summary ------------------------------------------------------------------------


def step_summary_markdown(
    summary: Summary, children: Iterable[JobResult | ChildRecord] = ()
) -> str:
    """The run's verdict, the index of its unrecovered failures (as the log's last screen has
    it), a table of them, what was recovered or flaky, and (collapsed) every Resource child."""
    icon = (
        ":x:" if summary.exit_code else ":warning:" if summary.nothing_ran else ":white_check_mark:"
    )
    lines = [f"## {icon} {_cell(_verdict_line(summary))}", ""]
    lines += _failure_index(summary.failures)
    if summary.incomplete:
        lines += ["**Run is INCOMPLETE:** a phase started and never ended.", ""]
    completeness = summary.completeness
    if completeness.without_verdict:
        count, why = len(completeness.without_verdict), completeness.without_verdict_why
        lines += [f"**{count} planned test(s) not run** ({_cell('; '.join(why))})", ""]
    if summary.nothing_ran:
        lines += ["**Nothing ran:** no test passed or failed.", ""]
    if summary.show_skip_reasons and summary.completeness.skip_reasons:
        lines += [_FENCE, *skip_groups(summary.completeness), _FENCE[:3], ""]
    lines += _failures_table(summary.failures)
    lines += _verdict_list(
        "Recovered",
        "re-run in a fresh process",
        [f"{_code(v.nodeid)} (attempt {v.attempt})" for v in summary.recovered],
    )
    lines += _verdict_list(
        "Flaky",
        "failed, then passed on retry",
        [f"{_code(v.nodeid)} passed on attempt {v.attempt}" for v in summary.flaky],
    )
    lines += _children_details([_as_record(child) for child in children])
    return "\n".join(lines)


def append_step_summary(markdown: str, path: str | os.PathLike[str] | None = None) -> bool:
    """Append ``markdown`` to the step summary (``$GITHUB_STEP_SUMMARY`` unless ``path``),
    keeping the file within GitHub's 1 MiB; True when it had to be cut."""
    target = Path(path) if path is not None else _step_summary_from_env()
    return step_summary.append_step_summary(target, markdown, STEP_SUMMARY_CUT_NOTICE)


def _step_summary_from_env() -> Path:
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        raise ValueError("GITHUB_STEP_SUMMARY is not set (GitHub Actions sets it in each step)")
    return Path(target)


def _verdict_line(summary: Summary) -> str:
    # The summary's last line is its verdict ("simpler: ... -> exit N").
    lines = summary.text.rstrip("\n").splitlines()
    return lines[-1] if lines else f"simpler: exit {summary.exit_code}"


def _failure_index(failures: Sequence[Failure]) -> list[str]:
    """One line per unrecovered failure, the same lines as the index above the verdict line."""
    if not failures:
        return []
    entries = [
        f"{number}) {index_entry(failure)}".replace(_FENCE[:3], "'" * 3)
        for number, failure in enumerate(failures[:INDEX_CAP], 1)
    ]
    if len(failures) > INDEX_CAP:
        entries.append(f"+{len(failures) - INDEX_CAP} more in the table below")
    title = f"**Unrecovered failures: {len(failures)}**"
    return [title, "", _FENCE, *entries, _FENCE[:3], ""]


def _failures_table(failures: Sequence[Failure]) -> list[str]:
    if not failures:
        return ["No unrecovered failures.", ""]
    lines = [
        f"### {len(failures)} unrecovered failure(s)",
        "",
        "| Label/Test | Result | Devices | Duration | Log |",
        "| --- | --- | --- | --- | --- |",
    ]
    lines += [
        _row(
            _failure_name(row),
            _cell(row.result),
            _cell(row.devices),
            _duration(row.duration_s),
            _code(row.log) if row.log else "",
        )
        for row in tables.failure_rows(failures)
    ]
    return [*lines, ""]


def _failure_name(row: tables.FailureRow) -> str:
    """A test by its node id (code); a child by its label, and its test when it has one."""
    if not row.label:
        return _code(row.nodeid)
    return _cell(row.label) + (f" ({_code(row.nodeid)})" if row.nodeid else "")


def _verdict_list(title: str, meaning: str, items: list[str]) -> list[str]:
    if not items:
        return []
    return [f"**{title}** ({meaning}): {len(items)}", "", *[f"- {item}" for item in items], ""]


def _children_details(children: list[ChildRecord]) -> list[str]:
    rows = tables.child_rows(children)
    if not rows:
        return []
    failed = sum(1 for row in rows if row.failed)
    lines = [
        f"<details><summary>Resource children: {len(rows)} ({failed} failed)</summary>",
        "",
        "| Label | Result | Devices | Duration | Log |",
        "| --- | --- | --- | --- | --- |",
    ]
    lines += [
        _row(
            _cell(row.label),
            _cell(row.result),
            _cell(row.devices),
            _duration(row.duration_s),
            _code(row.log) if row.log else "",
        )
        for row in rows
    ]
    return [*lines, "", "</details>", ""]


def _row(*cells: str) -> str:
    return "| " + " | ".join(cells) + " |"


def _cell(text: str) -> str:
    """Plain text made safe for a table cell: no markup, no cell breaks, no row breaks."""
    text = strip_ansi(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("\\", "\\\\").replace("|", "\\|")
    return re.sub(r"\r\n|\r|\n", "<br>", text)


def _code(text: str) -> str:
    """``text`` as a code span, so paths and node ids keep their ``_`` and ``*``."""
    # GitHub splits table cells on "|" even inside code spans, unless it is escaped;
    # a backtick inside would end the span, and a node id never needs one.
    text = " ".join(strip_ansi(text).split()).replace("|", "\\|").replace("`", "'")
    return f"`{text}`"


def _duration(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds:.1f} s"


def _as_record(child: JobResult | ChildRecord) -> ChildRecord:
    return ChildRecord(child.serialize()) if isinstance(child, JobResult) else child
