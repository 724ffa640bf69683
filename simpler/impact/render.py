"""What ``simpler affected`` says: one line of the decision, the counts by reason, and (in
the JSON, or for one test with ``--explain``) every test's reasons."""

from __future__ import annotations

from collections import Counter
from typing import Any

from simpler.impact.affected import Affected

__all__ = ["explain", "headline", "json_document", "text_lines"]

LEFT_OUT = "no changed block, file, conftest or kernel touched it"


def headline(affected: Affected) -> str:
    decision = affected.decision
    total = len(decision.selected) + len(decision.left_out)
    count = f"{len(decision.selected)} of {total} tests selected"
    if decision.run_all is not None:
        return f"affected since {affected.rev}: {count}: everything runs ({decision.run_all})"
    assert affected.map_commit is not None
    where = f"map of {affected.map_commit[:7]}, {affected.commits_back} commit(s) back"
    if not decision.selected and decision.non_code and not decision.other_platforms:
        return (f"affected since {affected.rev} ({where}): {count}: every changed file is "
                f"non-code ({', '.join(decision.non_code)})")  # fmt: skip
    if not decision.selected and decision.other_platforms:
        return (f"affected since {affected.rev} ({where}): {count}: every changed file is "
                f"non-code or another platform's "
                f"({', '.join([*decision.non_code, *decision.other_platforms])})")  # fmt: skip
    share = affected.time_share()
    measured = f", {share:.0%} of the measured test time" if share is not None else ""
    return f"affected since {affected.rev} ({where}): {count}{measured}"


def text_lines(affected: Affected, *, every_test: bool = False) -> list[str]:
    """The headline and the counts by reason; ``every_test`` (``-v``): then each test, the
    selected with their reasons, the left out with why."""
    lines = [headline(affected)]
    selected = affected.decision.selected
    if affected.decision.run_all is None:
        kinds = Counter(_kind(r) for reasons in selected.values() for r in reasons)
        lines += [f"  {n:5d}  {kind}" for kind, n in kinds.most_common()]
    if every_test:
        lines += [
            f"selected  {nodeid}: {'; '.join(reasons)}" for nodeid, reasons in selected.items()
        ]
        lines += [f"left out  {nodeid}: {LEFT_OUT}" for nodeid in affected.decision.left_out]
    return lines


def explain(affected: Affected, nodeid: str) -> str:
    reasons = affected.decision.selected.get(nodeid)
    if reasons is not None:
        return f"{nodeid}: selected: " + "; ".join(reasons)
    if nodeid in affected.decision.left_out:
        return f"{nodeid}: left out: {LEFT_OUT}"
    return f"{nodeid}: not in the suite as collected now"


def json_document(affected: Affected) -> dict[str, Any]:
    decision = affected.decision
    return {
        "rev": affected.rev,
        "map_commit": affected.map_commit,
        "commits_back": affected.commits_back,
        "run_all": decision.run_all,
        "non_code": decision.non_code,
        "other_platforms": decision.other_platforms,
        "tests": [
            *({"nodeid": n, "selected": True, "reasons": r} for n, r in decision.selected.items()),
            *({"nodeid": n, "selected": False, "reasons": [LEFT_OUT]} for n in decision.left_out),
        ],
    }


def _kind(reason: str) -> str:
    """A reason's kind, for the counts: the words before what it names."""
    for prefix in ("ran changed block", "launched kernel", "its file", "new test", "failed in",
                   "flaky in"):  # fmt: skip
        if reason.startswith(prefix):
            return prefix
    return "conftest on its path" if "on its path changed" in reason else reason
