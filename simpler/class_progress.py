"""Readable output: one line per finished test class, and a live progress line on a terminal."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

import pytest

from simpler.nodeids import class_of

__all__ = ["ClassProgress"]

VERDICT_ORDER = ("failed", "error", "passed", "skipped")


@dataclass
class _ClassTally:
    expected: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    duration: float = 0.0
    first_failure: str = ""

    @property
    def finished(self) -> int:
        return sum(self.outcomes.values())


class ClassProgress:
    def __init__(self, terminal: pytest.TerminalReporter, live: bool) -> None:
        self._terminal = terminal
        self._live = live
        self._classes: dict[str, _ClassTally] = defaultdict(_ClassTally)
        self._total = 0
        self._done = 0
        self._running = 0
        self._failures = 0
        self._progress_shown = False

    def expect(self, nodeids: list[str]) -> None:
        if self._total:  # every xdist worker reports the same collection
            return
        for nodeid in nodeids:
            self._classes[class_of(nodeid)].expected += 1
        self._total = len(nodeids)

    def started(self) -> None:
        self._running += 1
        self._show_progress()

    def finished(self, nodeid: str, outcome: str, duration: float, message: str) -> None:
        tally = self._classes[class_of(nodeid)]
        tally.outcomes[outcome] += 1
        tally.duration += duration
        self._running = max(0, self._running - 1)
        self._done += 1
        if outcome in ("failed", "error"):
            self._failures += 1
            tally.first_failure = tally.first_failure or message
        if tally.finished >= tally.expected:
            self._print_class(class_of(nodeid), tally)
        self._show_progress()

    def _print_class(self, name: str, tally: _ClassTally) -> None:
        self._clear_progress()
        bad = tally.outcomes["failed"] + tally.outcomes["error"]
        verdict = "FAIL" if bad else "PASS" if tally.outcomes["passed"] else "SKIP"
        counts = ", ".join(f"{tally.outcomes[k]} {k}" for k in VERDICT_ORDER if tally.outcomes[k])
        line = f"{verdict}  {name}  ({counts}, {tally.duration:.2f}s)"
        if tally.first_failure:
            line += f"  {tally.first_failure[:160]}"
        self._terminal.write_line(line, red=bool(bad), green=not bad)

    def _show_progress(self) -> None:
        if not self._live or not self._total:
            return
        self._terminal.rewrite(
            f"[{self._done}/{self._total}] running {self._running}, failures {self._failures}",
            erase=True,
        )
        self._progress_shown = True

    def _clear_progress(self) -> None:
        if self._progress_shown:
            self._terminal.rewrite("", erase=True)
            self._progress_shown = False
