"""The summary's block of quarantined tests: what each did this run, and why it cannot gate.

A quarantined test ran as usual; its records say ``quarantined: true`` and its failure
leaves the exit code alone (``simpler.reporting.verdicts``). The block names every one of
them that ran, with its outcome this run and, from the quarantine file when the report has
it, the entry's reason, owner or issue and expiry; then one line per test whose entry has
expired, which gates again. Not a retired device (a card taken out of a run).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from simpler.contract import strip_ansi
from simpler.reporting.quarantine_file import QuarantineFile
from simpler.reporting.resource_block import describe_exit
from simpler.reporting.verdicts import Failure, Verdict

__all__ = ["BLOCK_CAP", "QuarantineLine", "quarantine_block", "quarantine_lines"]

BLOCK_CAP = 30  # tests named in the block; a long quarantine list must not bury the summary
_REASON_CHARS = 100


@dataclass(frozen=True)
class QuarantineLine:
    """One quarantined test as the summary (and the step summary) names it."""

    nodeid: str
    outcome: str  # this run's: pytest's own, or how its child ended when it left no record
    failed: bool  # the outcome is a failure that would have gated
    about: str  # "reason: ...; owner ...; expires ...", or why it is not known
    expired_on: str = ""  # "YYYY-MM-DD" for a test whose entry expired: it gates again


def quarantine_lines(
    verdicts: dict[str, Verdict],
    quarantined: Sequence[Failure],
    gating: Sequence[Failure],
    details: QuarantineFile | None,
) -> list[QuarantineLine]:
    """Every quarantined test that ran, then every test whose entry had expired."""
    lines = [
        QuarantineLine(v.nodeid, _outcome(v), not v.green, _about(v.nodeid, details))
        for v in verdicts.values()
        if v.quarantined
    ]
    # A child that died before its test wrote a record: the child is all the run knows.
    lines += [
        QuarantineLine(f.nodeid, describe_exit(f.child), True, _about(f.nodeid, details))
        for f in quarantined
        if f.verdict is None and f.child is not None
    ]
    lines += [
        QuarantineLine(v.nodeid, _outcome(v), not v.green, "", expired)
        for v in verdicts.values()
        if (expired := v.record.quarantine_expired) and not v.quarantined
    ]
    lines += [
        QuarantineLine(f.nodeid, describe_exit(f.child), True, "", expired)
        for f in gating
        if f.verdict is None and f.child is not None and (expired := f.child.quarantine_expired)
    ]
    return lines


def quarantine_block(lines: Sequence[QuarantineLine]) -> list[str]:
    """The block's text, with a blank line after it; nothing when no test was quarantined."""
    active = [line for line in lines if not line.expired_on]
    expired = [line for line in lines if line.expired_on]
    if not lines:
        return []
    text = []
    if active:
        text.append(f"Quarantined ({len(active)}): failures here do not change the exit code")
        text += [f"  {line.nodeid}: {line.outcome} ({line.about})" for line in active[:BLOCK_CAP]]
        if len(active) > BLOCK_CAP:
            text.append(f"  +{len(active) - BLOCK_CAP} more quarantined test(s)")
    text += [
        f"quarantine expired {line.expired_on}: {line.nodeid} gates again ({line.outcome})"
        for line in expired[:BLOCK_CAP]
    ]
    if len(expired) > BLOCK_CAP:
        text.append(f"+{len(expired) - BLOCK_CAP} more test(s) whose quarantine expired")
    return [*text, ""]


def _outcome(verdict: Verdict) -> str:
    return "poison_skipped, never re-run" if verdict.never_rerun else verdict.outcome


def _about(nodeid: str, details: QuarantineFile | None) -> str:
    entry = details.entry_for(nodeid) if details is not None else None
    if entry is None:
        return "its entry is not in a quarantine file this report read"
    reason = " ".join(strip_ansi(entry.reason).split())
    if len(reason) > _REASON_CHARS:
        reason = reason[: _REASON_CHARS - 3] + "..."
    return "; ".join(part for part in (f"reason: {reason}", entry.who) if part) + (
        f"; expires {entry.expires}"
    )
