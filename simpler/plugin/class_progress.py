"""Readable output: one line per finished test class, and a live progress line on a terminal."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

import pytest

from simpler.base.nodeids import class_of

__all__ = ["ClassProgress", "ProgressReporter"]

VERDICT_ORDER = ("failed", "error", "passed", "skipped", "xfailed", "xpassed")


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
        ran = tally.outcomes["passed"] + tally.outcomes["xfailed"] + tally.outcomes["xpassed"]
        verdict = "FAIL" if bad else "PASS" if ran else "SKIP"
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


class ProgressReporter:
    """Feeds the class lines from wherever the reports arrive (this process or xdist's)."""

    def __init__(self, progress: ClassProgress) -> None:
        self._progress = progress
        self._outcomes: dict[str, tuple[str, float, str]] = {}

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._progress.expect([item.nodeid for item in session.items])

    @pytest.hookimpl(optionalhook=True)  # an xdist hook: unknown when xdist is not loaded
    def pytest_xdist_node_collection_finished(self, node: object, ids: list[str]) -> None:
        self._progress.expect(ids)

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self._progress.started()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when not in ("setup", "call", "teardown"):  # xdist: its worker crashed
            _, duration, _ = self._outcomes.pop(report.nodeid, ("", 0.0, ""))
            text = str(report.longrepr or "").strip()  # "worker 'gw0' crashed while running ..."
            message = text.splitlines()[0] if text else ""
            self._progress.finished(report.nodeid, "failed", duration, message)
            return
        outcome, duration, message = self._outcomes.get(report.nodeid, ("passed", 0.0, ""))
        duration += report.duration
        if report.failed:
            # A teardown error after a call failure leaves the test failed, as pytest counts it.
            outcome = "failed" if report.when == "call" or outcome == "failed" else "error"
            message = message or _first_line(report.longreprtext)
        elif report.skipped and outcome == "passed":
            outcome = "xfailed" if hasattr(report, "wasxfail") else "skipped"
        elif report.passed and report.when == "call" and hasattr(report, "wasxfail"):
            outcome = "xpassed"
        self._outcomes[report.nodeid] = (outcome, duration, message)
        if report.when == "teardown":
            del self._outcomes[report.nodeid]
            self._progress.finished(report.nodeid, outcome, duration, message)


def _first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.startswith("E ")]
    return lines[0][1:].strip() if lines else ""
