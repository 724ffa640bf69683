"""Which tests a change can break, from an impact map, with a reason for every test.

The change is each file that differs between the map's commit and the working tree, with its
source now (None: deleted). A test is selected when its file, a ``conftest.py`` on its path or
a block it ran changed, or it is new; what the map cannot see fails closed, the whole suite
with the rule named (:attr:`Decision.run_all`); a change of ``non_code`` files only selects
nothing (docs/affected.md, "The decision").
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from simpler.impact.blocks import MODULE, blocks_of
from simpler.impact.kernel_sources import kernel_of, source_checksum
from simpler.impact.map import BlockKey, ImpactMap
from simpler.impact.test_imports import imports_module

__all__ = ["Decision", "Rules", "everything", "select_tests"]

# What a runner library is built from: a change to one no kernel in the map names runs all.
NATIVE_SUFFIXES = frozenset({".c", ".cc", ".cpp", ".cxx", ".cu", ".h", ".hh", ".hpp", ".hxx"})


@dataclass(frozen=True)
class Rules:
    """``[tool.simpler.affected]``: patterns (fnmatch, ``**`` for any depth) of paths."""

    non_code: tuple[str, ...] = ()  # changes that select nothing (docs/**, *.md)
    run_all: tuple[str, ...] = ()  # changes that select everything
    recent_runs: int = 20  # a test that failed or was flaky in these last runs always runs
    # A platform's own trees: a change there selects nothing on another platform's run.
    platforms: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass
class Decision:
    selected: dict[str, list[str]] = field(default_factory=dict)  # nodeid -> its reasons
    left_out: list[str] = field(default_factory=list)
    run_all: str | None = None  # the rule that failed closed, when one did
    non_code: list[str] = field(default_factory=list)  # changed files that select nothing
    other_platforms: list[str] = field(default_factory=list)  # another platform's files


def select_tests(
    impact: ImpactMap,
    changes: Mapping[str, str | None],
    tests: Sequence[str],
    rules: Rules = Rules(),
    standing: Mapping[str, list[str]] | None = None,
    platform: str | None = None,
    imports: Mapping[str, frozenset[str]] | None = None,
) -> Decision:
    """The decision for ``tests`` (the suite as collected now) on ``changes``; ``standing``:
    reasons that select a test whatever changed (``unskippable``, its recent failures);
    ``imports``: what each of the suite's files imports (``simpler.impact.test_imports``),
    None when unknown (then a test file's import-time change fails closed)."""
    decision = Decision()
    code_changes: dict[str, str | None] = {}
    for path, source in sorted(changes.items()):
        if _matches(path, rules.run_all):
            return everything(tests, f"{path} is a run_all path")
        if _matches(path, rules.non_code):
            decision.non_code.append(path)
        elif _another_platforms(path, rules, platform):
            decision.other_platforms.append(path)
        else:
            code_changes[path] = source
    test_files = {_file_of(nodeid) for nodeid in tests}
    measured: dict[str, dict[str, str]] = {}  # file -> its blocks' checksums, as the map has them
    for (file, name), checksum in impact.checksums.items():
        measured.setdefault(file, {})[name] = checksum
    changed_blocks: set[BlockKey] = set()
    for path, source in code_changes.items():
        # A test file or a conftest selects its own tests by path (below); where the map
        # measured it, the tests that ran its functions too (a helper other tests call).
        by_path = path in test_files or _is_test_file(path)
        if path not in measured:
            if by_path:
                continue
            return everything(tests, _unaccounted(path))
        blocks = _changed_blocks(path, measured[path], source)
        at_import = blocks is None or (path, MODULE) in blocks
        if at_import and not (
            by_path and imports is not None and not imports_module(path, imports)
        ):
            return everything(tests, f"{path} changed import-time code the map cannot attribute")
        changed_blocks |= (blocks or set()) - {(path, MODULE)}
    for nodeid in tests:
        reasons = _reasons(impact, nodeid, code_changes, changed_blocks)
        reasons += (standing or {}).get(nodeid, [])
        if reasons:
            decision.selected[nodeid] = reasons
        else:
            decision.left_out.append(nodeid)
    return decision


def _reasons(
    impact: ImpactMap,
    nodeid: str,
    code_changes: Mapping[str, str | None],
    changed_blocks: set[BlockKey],
) -> list[str]:
    own = _file_of(nodeid)
    reasons = []
    if own in code_changes:
        reasons.append(f"its file {own} changed")
    reasons += [f"{path} on its path changed" for path in sorted(code_changes)
                if _conftest_over(path, own)]  # fmt: skip
    ran = impact.tests.get(nodeid)
    if ran is None:
        return [*reasons, "new test (not in the map)"]
    reasons += [_ran_changed(file, name) for file, name in sorted(ran & changed_blocks)]
    return reasons


def _ran_changed(file: str, name: str) -> str:
    kernel = kernel_of(name)
    if kernel is not None:
        return f"launched kernel {kernel} ({file} changed)"
    return f"ran changed block {file}::{name}"


def _unaccounted(path: str) -> str:
    if PurePosixPath(path).suffix in NATIVE_SUFFIXES:
        return f"{path} changed: C/C++ that no kernel in the map was built from"
    return f"{path} changed: the map has no account of it"


def _changed_blocks(path: str, was: Mapping[str, str], source: str | None) -> set[BlockKey] | None:
    """The blocks of ``path`` whose checksum (``was``, by name) differs now, or that vanished;
    None when the file cannot be read as Python any more. A kernel source's blocks (one per
    kernel built from it) change together, with the file's text."""
    if source is None:
        return {(path, name) for name in was}
    kernels = {name: checksum for name, checksum in was.items() if kernel_of(name) is not None}
    text_now = source_checksum(source) if kernels else None
    changed = {(path, name) for name, checksum in kernels.items() if checksum != text_now}
    python = {name: checksum for name, checksum in was.items() if name not in kernels}
    if not python:
        return changed
    try:
        now = {name: block.checksum for name, block in blocks_of(source).blocks.items()}
    except (SyntaxError, ValueError):
        return None
    return changed | {
        (path, name) for name, checksum in python.items() if now.get(name) != checksum
    }


def everything(tests: Iterable[str], why: str) -> Decision:
    """Every test, each for the one rule that failed closed."""
    return Decision(selected={nodeid: [why] for nodeid in tests}, run_all=why)


def _another_platforms(path: str, rules: Rules, platform: str | None) -> bool:
    """``path`` lies in another platform's tree, and in none of this one's."""
    if platform is None:
        return False
    theirs = any(_matches(path, p) for name, p in rules.platforms.items() if name != platform)
    return theirs and not _matches(path, rules.platforms.get(platform, ()))


def _is_test_file(path: str) -> bool:
    """A conftest, or a file pytest collects by default (``test_*.py``, ``*_test.py``): a
    change to one outside the suite as collected selects none of its tests."""
    name = PurePosixPath(path).name
    return (
        name == "conftest.py"
        or fnmatch.fnmatchcase(name, "test_*.py")
        or (fnmatch.fnmatchcase(name, "*_test.py"))
    )


def _conftest_over(path: str, test_file: str) -> bool:
    conftest = PurePosixPath(path)
    return conftest.name == "conftest.py" and (
        str(conftest.parent) == "." or PurePosixPath(test_file).is_relative_to(conftest.parent)
    )


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def _matches(path: str, patterns: Sequence[str]) -> bool:
    return any(_match(path, pattern) for pattern in patterns)


def _match(path: str, pattern: str) -> bool:
    """fnmatch, where ``dir/**`` is everything under dir and ``*.md`` any depth's name."""
    if pattern.endswith("/**"):
        return path.startswith(pattern[:-2])
    if "/" not in pattern:
        return fnmatch.fnmatchcase(PurePosixPath(path).name, pattern)
    return fnmatch.fnmatchcase(path, pattern)
