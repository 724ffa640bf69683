"""Append markdown to GitHub's step summary (``$GITHUB_STEP_SUMMARY``) within its 1 MiB limit.

GitHub refuses a step summary over 1 MiB and then shows none of it, so an oversized report
is cut at a line boundary, any ``<details>`` left open is closed, and a notice says so.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from simpler.capacity.model import InputError

__all__ = [
    "CUT_NOTICE",
    "STEP_SUMMARY_LIMIT",
    "append_step_summary",
    "fit",
    "step_summary_path",
]

STEP_SUMMARY_LIMIT = 1024 * 1024  # bytes, GitHub's limit for one step's summary
CUT_NOTICE = (
    "> **Note:** the capacity report was cut here to stay under GitHub's 1 MiB step summary "
    "limit; `simpler capacity --format json` gives all of it."
)
_ENV = "GITHUB_STEP_SUMMARY"
_CLOSER = "</details>\n"
_MAX_CLOSERS = 4  # the report nests <details> one level deep: a few closers are plenty


def step_summary_path(environ: Mapping[str, str] = os.environ) -> Path:
    """The file GitHub Actions reads the step summary from; InputError outside Actions."""
    target = environ.get(_ENV)
    if not target:
        raise InputError(f"--step-summary: ${_ENV} is not set (it is set inside GitHub Actions)")
    return Path(target)


def append_step_summary(path: Path, markdown: str) -> bool:
    """Append ``markdown`` to the step summary file; True when it had to be cut."""
    try:
        already = path.stat().st_size if path.exists() else 0
        # The limit covers the step's whole summary, so what earlier commands wrote counts.
        fitted = fit(markdown, STEP_SUMMARY_LIMIT - already)
        with path.open("a", encoding="utf-8") as summary:
            summary.write(fitted)
    except OSError as exc:
        raise InputError(
            f"--step-summary: cannot append to {path}: {exc.strerror or exc}"
        ) from None
    return fitted != markdown


def fit(markdown: str, budget: int) -> str:
    """``markdown`` if it fits in ``budget`` bytes, else its first whole lines and the notice."""
    encoded = markdown.encode("utf-8")
    if len(encoded) <= budget:
        return markdown
    ending = f"\n{CUT_NOTICE}\n"
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
