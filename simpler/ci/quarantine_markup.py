"""Quarantined tests in GitHub Actions: a ``::warning`` for each one that failed, and a short
block in the step summary.

A quarantined failure does not change the exit code, so it gets no ``::error``; a warning
keeps it visible on the run's page, where an owner looks. A test whose quarantine expired
is an ordinary failure again: its ``::error`` comes with the others.
"""

from __future__ import annotations

from simpler.ci.gha import workflow_command
from simpler.reporting.summary import Summary

__all__ = ["MARKDOWN_CAP", "WARNING_CAP", "quarantine_markdown", "quarantine_warnings"]

WARNING_CAP = 10  # GitHub shows only the first few annotations of a step anyway
MARKDOWN_CAP = 30


def quarantine_warnings(summary: Summary) -> list[str]:
    """One ``::warning`` per quarantined test that failed (capped), then one for the rest."""
    failed = [line for line in summary.quarantine_lines if line.failed and not line.expired_on]
    warnings = [
        workflow_command(
            "warning",
            f"{line.nodeid}: {line.outcome} ({line.about})",
            {"title": "Quarantined test failed (does not change the exit code)"},
        )
        for line in failed[:WARNING_CAP]
    ]
    if len(failed) > WARNING_CAP:
        warnings.append(
            workflow_command(
                "warning",
                f"{len(failed) - WARNING_CAP} more quarantined test(s) failed; "
                "the summary at the end of the log lists all of them",
                {"title": "More quarantined failures"},
            )
        )
    return warnings


def quarantine_markdown(summary: Summary) -> str:
    """The step summary's block: each quarantined test's outcome, and the expired entries."""
    lines = summary.quarantine_lines
    active = [line for line in lines if not line.expired_on]
    expired = [line for line in lines if line.expired_on]
    if not lines:
        return ""
    out = ["", ""]
    if active:
        out += [
            f"### Quarantined ({len(active)}): failures here do not change the exit code",
            "",
        ]
        out += [
            f"- `{_code(line.nodeid)}`: **{line.outcome}** ({_plain(line.about)})"
            for line in active[:MARKDOWN_CAP]
        ]
        if len(active) > MARKDOWN_CAP:
            out.append(f"- +{len(active) - MARKDOWN_CAP} more: see the log's summary")
        out.append("")
    out += [
        f"- quarantine expired {line.expired_on}: `{_code(line.nodeid)}` **gates again** "
        f"({line.outcome})"
        for line in expired[:MARKDOWN_CAP]
    ]
    return "\n".join(out) + "\n"


def _code(text: str) -> str:
    return text.replace("`", "'").replace("\n", " ")


def _plain(text: str) -> str:
    # A reason is the file author's text: it must not open markup the block never closes.
    for char in "<>|*_`[]":
        text = text.replace(char, "\\" + char)
    return " ".join(text.split())
