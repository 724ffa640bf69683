"""Questions the phases ask of a run's records: which devices were retired, what must be re-run."""

from __future__ import annotations

from collections.abc import Iterable

from simpler.contract import FAILED_OUTCOMES
from simpler.reporting.records import LifecycleRecord, PoisonSkipRecord, Record, TestRecord

__all__ = [
    "poison_skipped",
    "poison_skipped_by_worker",
    "poison_triggers",
    "retired_devices",
]


def retired_devices(records: Iterable[Record]) -> set[int]:
    """Devices retired from this run: a worker on them could not be reset (lifecycle
    ``give_up``). Not one skipped by ``process_must_end``: its card is freed when that
    process ends."""
    return {
        r.device
        for r in records
        if isinstance(r, LifecycleRecord)
        and r.dest == "skipped"
        and r.trigger != "process_must_end"
        and r.device is not None
    }


def poison_skipped(records: Iterable[Record]) -> list[str]:
    """Selected from the ``poison_skip`` registrations only, never from plain skips."""
    return list(dict.fromkeys(r.nodeid for r in records if isinstance(r, PoisonSkipRecord)))


def poison_skipped_by_worker(records: Iterable[Record]) -> dict[str, list[str]]:
    """The registrations grouped by the worker that skipped them, in the order they came;
    a test registered by two workers belongs to the first."""
    groups: dict[str, list[str]] = {}
    placed: set[str] = set()
    for r in records:
        if isinstance(r, PoisonSkipRecord) and r.nodeid not in placed:
            placed.add(r.nodeid)
            groups.setdefault(r.worker, []).append(r.nodeid)
    return groups


def poison_triggers(records: Iterable[Record]) -> list[str]:
    """The tests that poisoned their worker outside the retry phase, in the order they did."""
    return list(
        dict.fromkeys(
            r.nodeid
            for r in records
            if isinstance(r, TestRecord)
            and r.poisoned
            and r.outcome in FAILED_OUTCOMES
            and r.phase != "retry"
        )
    )
