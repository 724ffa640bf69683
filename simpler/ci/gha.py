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
from typing import Any

from simpler.ci import step_summary
from simpler.ci.step_summary import STEP_SUMMARY_LIMIT, StepSummaryUnwritable
from simpler.contract import strip_ansi
from simpler.reporting.failure_block import failure_headline
from simpler.reporting.last_screen import INDEX_CAP, index_entry, skip_groups
from simpler.reporting.records import ChildRecord, Record
from simpler.reporting.resource_block import (
    child_failed,
    describe_exit,
    devices_text,
    latest_children,
)
from simpler.reporting.summary import Summary
from simpler.reporting.verdicts import Failure, Verdict
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
_MESSAGE_CHARS = 200  # one table cell: the first line of a message, not a traceback
_NO_RECORD = Record({})  # a failure with neither child nor verdict: its cells stay empty


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
    record = _as_record(child)
    parts = ["FAIL" if child_failed(record) else "PASS"]
    if record.raw.get("timed_out"):
        parts.append("timeout")
    parts.append(_rc_or_signal(record))
    parts.append(f"devices={devices_text(record)}")
    return " ".join(parts)


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
    completeness = summary.completeness
    if completeness.skip_reasons:
        reason, count = completeness.skip_reasons[0]
        message = (
            f"{completeness.skipped} of {completeness.tested} test(s) skipped; "
            f"most: {count} x {reason}"
        )
    else:
        message = "no test was selected: the report holds no test verdict"
    return workflow_command("warning", message, {"title": "Nothing ran"})


def _annotation(failure: Failure) -> str:
    if failure.child is not None:
        child = failure.child
        label = child.label or "?"
        message = f"{label} {_rc_or_signal(child)} devices={devices_text(child)}"
        if child.raw.get("timed_out") or child.raw.get("reached_summary") is False:
            message += f" ({describe_exit(child)})"  # timed out / crashed: say which
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
    lines += [_row(*_failure_cells(failure)) for failure in failures]
    return [*lines, ""]


def _failure_cells(failure: Failure) -> tuple[str, str, str, str, str]:
    if failure.kind == "phase" and failure.phase is not None:
        phase = failure.phase
        result = f"returncode {phase.returncode}, no failing test reported"
        return _cell(f"phase {phase.name}"), _cell(result), "", _duration(phase.duration_s), ""
    child, verdict = failure.child, failure.verdict
    if failure.kind == "test" and verdict is not None:
        name, result = _code(verdict.nodeid), _test_result(verdict)
        if child is not None:  # it ran in a child job: that job's facts locate it
            result += f"; child {child.label or '?'}: {describe_exit(child)}"
    else:
        assert child is not None  # a "child" failure always carries its child record
        name, result = _cell(child.label or "?"), describe_exit(child)
        if failure.nodeid:
            name += f" ({_code(failure.nodeid)})"
    where: Record = child or (verdict.record if verdict is not None else _NO_RECORD)
    devices = devices_text(child) if child is not None else where.text("device")
    log = where.text("log")
    return (
        name,
        _cell(result),
        _cell(devices),
        _duration(where.raw.get("duration_s")),
        _code(log) if log else "",
    )


def _test_result(verdict: Verdict) -> str:
    if verdict.never_rerun:
        registration = verdict.registration or verdict.record
        reason = _first_line(registration.text("reason") or verdict.record.text("message"))
        return "poison_skipped, never re-run" + (f": {reason}" if reason else "")
    message = _first_line(verdict.record.text("message"))
    return f"{verdict.outcome}: {message}" if message else verdict.outcome


def _verdict_list(title: str, meaning: str, items: list[str]) -> list[str]:
    if not items:
        return []
    return [f"**{title}** ({meaning}): {len(items)}", "", *[f"- {item}" for item in items], ""]


def _children_details(children: list[ChildRecord]) -> list[str]:
    latest = latest_children(children)
    if not latest:
        return []
    failed = sum(1 for child in latest if child_failed(child))
    lines = [
        f"<details><summary>Resource children: {len(latest)} ({failed} failed)</summary>",
        "",
        "| Label | Result | Devices | Duration | Log |",
        "| --- | --- | --- | --- | --- |",
    ]
    for child in latest:
        result = describe_exit(child) if child_failed(child) else "passed"
        log = child.text("log")
        lines.append(
            _row(
                _cell(child.label or "?"),
                _cell(result),
                _cell(devices_text(child)),
                _duration(child.raw.get("duration_s")),
                _code(log) if log else "",
            )
        )
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


def _duration(value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:.1f} s"
    return ""


def _first_line(text: str) -> str:
    line = next((part.strip() for part in strip_ansi(text).splitlines() if part.strip()), "")
    return line if len(line) <= _MESSAGE_CHARS else line[: _MESSAGE_CHARS - 3] + "..."


def _rc_or_signal(record: ChildRecord) -> str:
    signal = record.raw.get("signal")
    return f"signal={signal}" if signal else f"rc={record.raw.get('returncode')}"


def _as_record(child: JobResult | ChildRecord) -> ChildRecord:
    return ChildRecord(child.serialize()) if isinstance(child, JobResult) else child
