"""Questions the phases ask of a run's records: what was quarantined, what must be re-run."""

from __future__ import annotations

from collections.abc import Iterable

from simpler.reporting.report_file import Record

__all__ = ["poison_skipped", "poison_triggers", "quarantined_devices"]


def quarantined_devices(records: Iterable[Record]) -> set[int]:
    """Devices whose worker could not be reset in this run (lifecycle ``give_up``)."""
    return {
        int(r["device"])
        for r in records
        if r.get("type") == "lifecycle"
        and r.get("dest") == "skipped"
        and r.get("device") is not None
    }


def poison_skipped(records: Iterable[Record]) -> list[str]:
    """Selected from the ``poison_skip`` registrations only, never from plain skips."""
    return list(dict.fromkeys(r["nodeid"] for r in records if r.get("type") == "poison_skip"))


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
