"""The last screen of a summary: what a user sees without scrolling, whatever came above.

The index of unrecovered failures (at most :data:`INDEX_CAP`) right above the verdict line,
above it the tests without a verdict and grouped skip reasons, which give way first: all in
:data:`LAST_SCREEN` lines (docs/running.md, "How a run goes").
"""

from __future__ import annotations

from collections.abc import Sequence

from simpler.contract import strip_ansi
from simpler.reporting.completeness import Completeness
from simpler.reporting.records import ChildRecord, TestRecord
from simpler.reporting.verdicts import Failure

__all__ = [
    "INDEX_CAP",
    "LAST_SCREEN",
    "SKIP_GROUP_CAP",
    "index_entry",
    "last_screen",
    "nothing_ran_reason",
    "skip_groups",
]

LAST_SCREEN = 40  # lines, the verdict line included: one terminal screen, a CI log's tail
INDEX_CAP = 30  # failures named in the index; the rest are in the detailed blocks above
SKIP_GROUP_CAP = 10  # skip reasons shown, most common first
NAMES_CAP = 5  # planned tests without a verdict named by node id
_WHY_CHARS = 120  # an index line's reason: the exception's first line, not its traceback


def last_screen(
    failures: Sequence[Failure],
    completeness: Completeness,
    *,
    show_skips: bool,
    verdict_line: str,
    code_coverage: Sequence[str] = (),
) -> list[str]:
    """The lines that end the summary, the verdict line last: at most LAST_SCREEN of them.

    ``code_coverage``: the coverage lines (capped by their maker), right above the index."""
    index = _index(failures)
    header = 1 if completeness.without_verdict else 0  # the without-verdict line is always shown
    room = LAST_SCREEN - len(index) - 1 - header - len(code_coverage)
    skips = skip_groups(completeness, room) if show_skips else []
    missing = _without_verdict(completeness, room - len(skips) + header)
    return [*skips, *missing, *code_coverage, *index, verdict_line]


def nothing_ran_reason(completeness: Completeness) -> str:
    """Why nothing ran, in one line: the most common skip reason, or that none was selected."""
    if completeness.skip_reasons:
        reason, count = completeness.skip_reasons[0]
        return (
            f"{completeness.skipped} of {completeness.tested} test(s) skipped; "
            f"most: {count} x {reason}"
        )
    return "no test was selected: the report holds no test verdict"


def skip_groups(completeness: Completeness, room: int = SKIP_GROUP_CAP + 2) -> list[str]:
    """``Skipped: 9 of 9 test(s), by reason:`` then one ``  count  reason`` line per reason,
    most common first; at most ``room`` lines (never fewer than the first reason)."""
    groups = completeness.skip_reasons
    if not groups:
        return []
    shown = _fit(len(groups), SKIP_GROUP_CAP, room - 1)
    lines = [f"Skipped: {completeness.skipped} of {completeness.tested} test(s), by reason:"]
    lines += [f"  {count:>4}  {_clip(reason)}" for reason, count in groups[: max(shown, 1)]]
    rest = groups[max(shown, 1) :]
    if rest:
        tests = sum(count for _, count in rest)
        lines.append(f"  +{len(rest)} more reason(s), {tests} test(s)")
    return lines


def _without_verdict(completeness: Completeness, room: int) -> list[str]:
    """The planned tests that got no verdict: one line that counts them and says why, then
    their node ids in what room is left."""
    missing = completeness.without_verdict
    if not missing:
        return []
    why = "; ".join(completeness.without_verdict_why)
    lines = [f"*** {len(missing)} planned test(s) not run ({why}) ***"]
    named = _fit(len(missing), NAMES_CAP, room - 1)
    lines += [f"  {nodeid}" for nodeid in missing[:named]]
    if named < len(missing) and room - 1 > named:
        lines.append(f"  +{len(missing) - named} more")
    return lines


def _fit(items: int, cap: int, room: int) -> int:
    """How many of ``items`` lines to show in ``room`` lines, keeping one for "+N more"."""
    shown = max(0, min(items, cap, room))
    if shown < items:
        shown = max(0, min(shown, room - 1))
    return shown


def _index(failures: Sequence[Failure]) -> list[str]:
    if not failures:
        return []
    lines = [f"Unrecovered failures: {len(failures)} (details above)"]
    lines += [
        f"  {number}) {index_entry(failure)}"
        for number, failure in enumerate(failures[:INDEX_CAP], 1)
    ]
    if len(failures) > INDEX_CAP:
        lines.append(f"  +{len(failures) - INDEX_CAP} more above")
    return lines


def index_entry(failure: Failure) -> str:
    """``node id: outcome, rc=R at WHERE (or the exception's first line) [phase]``."""
    if failure.kind == "phase" and failure.phase is not None:
        phase = failure.phase
        if phase.errors:
            why = f"failed inside simpler: {phase.errors[0]}"
        elif phase.interrupted:
            why = f"interrupted by {phase.interrupted[0]}"
        else:
            why = f"returncode {phase.returncode}, no failing test reported"
        return f"phase {phase.name}: {_clip(why)}"
    verdict, child = failure.verdict, failure.child
    if failure.kind == "child" and child is not None:
        name = failure.nodeid or f"child {child.label or '?'}"
        return f"{name}: {_clip(_child_exit(child))} [{child.phase or '?'}]"
    assert verdict is not None  # a "test" failure always carries its verdict
    if verdict.never_rerun:
        outcome, why = "poison_skipped, never re-run", ""
    else:
        outcome, why = verdict.outcome, _rc_or_message(verdict.test)
    if child is not None and not why:
        why = f"child {_child_exit(child)}"
    entry = f"{verdict.nodeid}: {outcome}" + (f", {_clip(why)}" if why else "")
    return f"{entry} [{verdict.phase or '?'}]"


def _rc_or_message(record: TestRecord | None) -> str:
    if record is None:
        return ""  # a registration decided: it never ran
    if record.rc is not None:
        return f"rc={record.rc}" + (f" at {record.where}" if record.where else "")
    message = strip_ansi(record.message).strip()
    return message.splitlines()[0] if message else ""


def _child_exit(child: ChildRecord) -> str:
    if child.not_run:
        return child.not_run
    status = child.signal or f"rc={child.returncode}"
    return status + (" (timed out)" if child.timed_out else "")


def _clip(text: str) -> str:
    text = " ".join(strip_ansi(text).split())
    return text if len(text) <= _WHY_CHARS else text[: _WHY_CHARS - 3] + "..."
