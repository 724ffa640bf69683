"""The flake scores as a person or a program reads them: a terminal table, JSON, Markdown.

Pure: scores in, text out (each ending in a newline), in the order given (``compute_scores``
sorts). The JSON keys are docs/design.md's ("The history store"), which other tools read.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence

from simpler.history.model import STATES, TestScore

__all__ = ["EMPTY", "render_json", "render_markdown", "render_table"]

EMPTY = "no test in the window"
_RATE_DIGITS = 4  # JSON rates: 0.0123, enough to order tests and compare to a threshold
_TABLE_COLUMNS = (
    ("state", "<"),
    ("flake rate [95%]", "<"),
    ("runs", ">"),
    ("failed: test", ">"),
    ("device", ">"),
    ("infra", ">"),
    ("retry pass", ">"),
    ("flip rate", ">"),
    ("same-commit", ">"),
    ("test", "<"),
)
_MARKDOWN_HEADER = (
    "| State | Flake rate | 95% interval | Runs | Failed: test | device | infra "
    "| Pass on retry | Flip rate | Same-commit flips | Test |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n"
)


def render_table(scores: Sequence[TestScore]) -> str:
    """Aligned columns, the node id last (it is the long one), and a count of each state."""
    if not scores:
        return f"{EMPTY}\n"
    rows = [[name for name, _ in _TABLE_COLUMNS]]
    rows += [_table_cells(score) for score in scores]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_TABLE_COLUMNS))]
    lines = []
    for row in rows:
        cells = [
            f"{cell:{align}{width}}"
            for cell, width, (_, align) in zip(row, widths, _TABLE_COLUMNS, strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
    lines.append(_state_counts(scores))
    return "\n".join(lines) + "\n"


def render_json(scores: Sequence[TestScore]) -> str:
    """A list of objects with docs/design.md's keys; rates rounded to four decimals."""
    documents = []
    for score in scores:
        document = score.to_json()
        for key in ("flip_rate", "flake_rate", "flake_rate_low", "flake_rate_high"):
            document[key] = round(document[key], _RATE_DIGITS)
        documents.append(document)
    return json.dumps(documents, indent=2) + "\n"


def render_markdown(scores: Sequence[TestScore]) -> str:
    """A GitHub table for ``$GITHUB_STEP_SUMMARY``: the tests that are not stable, then one
    line counting the stable ones. A step summary holds at most 1 MiB and a reader wants the
    tests that need them; thousands of stable rows would bury those (the JSON has all)."""
    if not scores:
        return f"{EMPTY.capitalize()}.\n"
    shown = [score for score in scores if score.state != "stable"]
    stable = len(scores) - len(shown)
    parts = []
    if shown:
        parts.append(_MARKDOWN_HEADER + "".join(_markdown_row(score) for score in shown))
    if stable:
        plural = "test is" if stable == 1 else "tests are"
        parts.append(f"{stable} more {plural} stable in the window.\n")
    return "\n".join(parts)


def _table_cells(score: TestScore) -> list[str]:
    interval = f"[{_percent(score.flake_rate_low)}-{_percent(score.flake_rate_high)}]"
    return [score.state, f"{_percent(score.flake_rate)} {interval}", *_counts(score), score.nodeid]


def _counts(score: TestScore) -> list[str]:
    """The cells the table and the markdown share: runs, failures by cause, flips."""
    return [
        str(score.runs),
        str(score.failed_test),
        str(score.failed_device),
        str(score.failed_infra),
        str(score.pass_on_retry),
        _percent(score.flip_rate),
        str(score.same_commit_flips),
    ]


def _state_counts(scores: Sequence[TestScore]) -> str:
    counts = Counter(score.state for score in scores)
    known = [f"{counts[state]} {state}" for state in STATES if counts[state]]
    plural = "test" if len(scores) == 1 else "tests"
    return f"{len(scores)} {plural}: " + ", ".join(known)


def _markdown_row(score: TestScore) -> str:
    interval = f"{_percent(score.flake_rate_low)}\u2013{_percent(score.flake_rate_high)}"
    cells = [
        score.state,
        _percent(score.flake_rate),
        interval,
        *_counts(score),
        _code(score.nodeid),
    ]
    return "| " + " | ".join(cells) + " |\n"


def _code(text: str) -> str:
    """``text`` as a code span in a table cell: ``|`` escaped (GitHub splits cells on it
    before it parses code spans), fenced by more backticks than the text holds in a row."""
    text = " ".join(text.splitlines()).replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    padding = " " if longest else ""  # a span may not start or end with its fence's backtick
    return f"{fence}{padding}{text}{padding}{fence}"


def _percent(value: float) -> str:
    return f"{value * 100:.1f}%"
