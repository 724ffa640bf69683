"""Append markdown to GitHub's step summary (``$GITHUB_STEP_SUMMARY``) within its 1 MiB limit.

GitHub refuses a step summary over 1 MiB and then shows none of it, so an oversized text
is cut at a line boundary, any ``<details>`` left open is closed, and a notice says so.
What earlier steps' commands already wrote counts against the limit.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "STEP_SUMMARY_LIMIT",
    "StepSummaryUnwritable",
    "append_step_summary",
    "append_within_limit",
    "fit",
]

STEP_SUMMARY_LIMIT = 1024 * 1024  # bytes, GitHub's limit for one step's summary
_CLOSER = "</details>\n"
_MAX_CLOSERS = 4  # our reports nest <details> one level deep: a few closers are plenty


class StepSummaryUnwritable(OSError):
    """The step summary file cannot be appended to; the message is one line naming it."""


def append_step_summary(path: Path, markdown: str, notice: str) -> bool:
    """``append_within_limit``, with a failure as one line that names the file and why."""
    try:
        return append_within_limit(path, markdown, notice)
    except OSError as error:
        raise StepSummaryUnwritable(
            f"cannot append the step summary to {path}: {error.strerror or error}"
        ) from None


def append_within_limit(path: Path, markdown: str, notice: str) -> bool:
    """Append ``markdown`` (cut with ``notice`` if need be); True when it was cut.

    Raises OSError when the file cannot be written.
    """
    already = path.stat().st_size if path.exists() else 0
    fitted = fit(markdown, STEP_SUMMARY_LIMIT - already, notice)
    with path.open("a", encoding="utf-8") as summary:
        summary.write(fitted)
    return fitted != markdown


def fit(markdown: str, budget: int, notice: str) -> str:
    """``markdown`` if it fits in ``budget`` bytes, else its first whole lines and ``notice``."""
    encoded = markdown.encode("utf-8")
    if len(encoded) <= budget:
        return markdown
    ending = f"\n{notice}\n"
    room = budget - len(ending.encode("utf-8")) - len(_CLOSER.encode("utf-8")) * _MAX_CLOSERS
    if room < 0:
        return ""  # the summary is full already: even the notice would push it over
    kept = _whole_lines(encoded, room)
    closers = _CLOSER * min(_open_details(kept), _MAX_CLOSERS)
    return kept + closers + ending


def _whole_lines(encoded: bytes, room: int) -> str:
    """The longest prefix of ``encoded`` within ``room`` bytes that ends at a line break."""
    cut = encoded.rfind(b"\n", 0, room)  # a "\n" byte never sits inside a UTF-8 character
    return encoded[: cut + 1].decode("utf-8") if cut >= 0 else ""


def _open_details(markdown: str) -> int:
    opened = markdown.count("<details>") - markdown.count("</details>")
    return max(opened, 0)
