"""Questions the phases ask of a run's records: what was quarantined, what must be re-run."""

from __future__ import annotations

from collections.abc import Iterable

from simpler.reporting.report_file import Record

__all__ = [
    "poison_skipped",
    "poison_skipped_by_worker",
    "poison_triggers",
    "quarantined_devices",
]


def quarantined_devices(records: Iterable[Record]) -> set[int]:
    """Devices whose worker could not be reset in this run (lifecycle ``give_up``).

    Not one skipped by ``process_must_end``: its card is freed when that process ends.
    """
    return {
        int(r["device"])
        for r in records
        if r.get("type") == "lifecycle"
        and r.get("dest") == "skipped"
        and r.get("trigger") != "process_must_end"
        and r.get("device") is not None
    }


def poison_skipped(records: Iterable[Record]) -> list[str]:
    """Selected from the ``poison_skip`` registrations only, never from plain skips."""
    return list(dict.fromkeys(r["nodeid"] for r in records if r.get("type") == "poison_skip"))


def poison_skipped_by_worker(records: Iterable[Record]) -> dict[str, list[str]]:
    """The registrations grouped by the worker that skipped them, in the order they came;
    a test registered by two workers belongs to the first."""
    groups: dict[str, list[str]] = {}
    placed: set[str] = set()
    for r in records:
        if r.get("type") == "poison_skip" and r["nodeid"] not in placed:
            placed.add(r["nodeid"])
            groups.setdefault(str(r.get("worker") or ""), []).append(r["nodeid"])
    return groups


def poison_triggers(records: Iterable[Record]) -> list[str]:
    """The tests that poisoned their worker outside the retry phase, in the order they did."""
    return list(
        dict.fromkeys(
            r["nodeid"]
            for r in records
            if r.get("type") == "test"
            and r.get("poisoned")
            and r.get("outcome") in ("failed", "error")
            and r.get("phase") != "retry"
        )
    )
