"""``[tool.simpler.affected]`` in the project's pyproject.toml: which changed paths select
nothing (``non_code``) and which select everything (``run_all``), and how many of the last
runs a test's failure or flakiness keeps it selected (``recent_runs``, 20; 0: none), and each
platform's own trees (``platforms``: a change there selects nothing on another platform).

Without the table, what never holds code a test runs (docs, Markdown, reStructuredText, the
licence) selects nothing, and everything else the map cannot see fails closed."""

from __future__ import annotations

from pathlib import Path

from simpler.base.compat import tomllib
from simpler.impact.select import Rules

__all__ = ["DEFAULT_NON_CODE", "load_rules"]

DEFAULT_NON_CODE = ("docs/**", "*.md", "*.rst", "LICENSE*")
KEYS = ("non_code", "run_all", "recent_runs", "platforms")
PATTERN_KEYS = ("non_code", "run_all")


def load_rules(root: Path) -> Rules:
    """The rules of the project at ``root``; ValueError (``file:line: what``) when the table
    is not one simpler can read."""
    path = root / "pyproject.toml"
    if not path.is_file():
        return Rules(non_code=DEFAULT_NON_CODE)
    text = path.read_text(encoding="utf-8")
    try:
        table = tomllib.loads(text).get("tool", {}).get("simpler", {}).get("affected")
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path}: {error}") from None
    if table is None:
        return Rules(non_code=DEFAULT_NON_CODE)
    header = _line_of(text, "[tool.simpler.affected]")
    where = f"{path}:{header}"
    if not isinstance(table, dict):
        raise ValueError(f"{where}: tool.simpler.affected must be a table")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ValueError(f"{where}: unknown key {', '.join(unknown)} (known: {', '.join(KEYS)})")
    lists = {}
    for key in PATTERN_KEYS:
        value = table.get(key, list(DEFAULT_NON_CODE) if key == "non_code" else [])
        if not isinstance(value, list) or not all(isinstance(p, str) and p for p in value):
            line = _line_of(text, key, after=header)
            raise ValueError(f"{path}:{line}: {key} must be a list of path patterns")
        lists[key] = tuple(value)
    recent = table.get("recent_runs", Rules().recent_runs)
    if isinstance(recent, bool) or not isinstance(recent, int) or recent < 0:
        line = _line_of(text, "recent_runs", after=header)
        raise ValueError(f"{path}:{line}: recent_runs must be a whole number of runs (0: none)")
    platforms = table.get("platforms", {})
    if not isinstance(platforms, dict) or not all(
        isinstance(trees, list) and all(isinstance(p, str) and p for p in trees)
        for trees in platforms.values()
    ):
        line = _line_of(text, "platforms", after=header)
        raise ValueError(
            f"{path}:{line}: platforms must map each platform to a list of path patterns"
        )
    return Rules(
        non_code=lists["non_code"],
        run_all=lists["run_all"],
        recent_runs=recent,
        platforms={name: tuple(trees) for name, trees in platforms.items()},
    )


def _line_of(text: str, start: str, after: int = 0) -> int:
    """The number (from 1) of the first line past ``after`` that starts with ``start``, else
    ``after`` (the table's own line), else 1."""
    for number, line in enumerate(text.splitlines(), start=1):
        if number > after and line.strip().startswith(start):
            return number
    return after or 1
