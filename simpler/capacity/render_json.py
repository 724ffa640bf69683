"""Write a Capacity as JSON: the markdown's numbers, for dashboards and scripts.

Keys of earlier versions keep their meaning (``enabled``, ``disabled``, ``est_time_s``,
``backends`` as enabled counts, ``suites``, a suite's ``type``, ``pool``); the splits per
commit and nightly are added beside them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from simpler.capacity.aggregate import Capacity, Schedules, Split, SuiteStats, Tally, backend_order

if TYPE_CHECKING:  # the pool module imports the scheduler: only --pool needs it at run time
    from simpler.capacity.pool import PoolResult

__all__ = ["render_json"]


def render_json(capacity: Capacity, pools: Sequence[PoolResult] = ()) -> str:
    summary = {_size_key(group.size): _tally_json(group.tally) for group in capacity.sized_groups()}
    # "unsized" is always present, so a consumer never has to ask whether the key exists.
    summary["unsized"] = _tally_json(capacity.unsized_group().tally, sized=False)
    document: dict[str, Any] = {
        "device_count_summary": summary,
        "totals": _tally_json(capacity.totals),
        "by_suite": [_suite_json(stats) for stats in capacity.all_suites()],
    }
    if pools:
        results = [_pool_json(pool) for pool in pools]
        if len(results) == 1 and pools[0].backend is None:
            document["pool"] = results[0]  # ``--pool N``: the one pool, as it always was
        document["pools"] = results
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _size_key(size: int | None) -> str:
    return "unsized" if size is None else str(size)


def _tally_json(tally: Tally, *, sized: bool = True) -> dict[str, Any]:
    backends = sorted(tally.backends, key=backend_order)
    return {
        "enabled": tally.enabled,
        "disabled": tally.disabled,
        "est_time_s": round(tally.est_time_s, 3),
        "backends": {name: tally.backends[name] for name in backends},
        "suites": sorted(tally.suites),
        **_schedules_json(tally.schedules, sized=sized),
        "by_backend": {
            name: {
                "enabled": tally.backends[name],
                **_schedules_json(tally.backend_schedules[name], sized=sized),
            }
            for name in backends
        },
    }


def _schedules_json(schedules: Schedules, *, sized: bool) -> dict[str, Any]:
    """``per_commit``, ``nightly`` and their ``device_hours``; null when nobody knows them."""
    return {
        "per_commit": _split_json(schedules.per_commit, sized=sized),
        "nightly": _split_json(schedules.nightly, sized=sized),
        "device_hours": round(schedules.device_hours, 3) if sized else None,
    }


def _split_json(split: Split, *, sized: bool) -> dict[str, Any]:
    return {
        "enabled": split.count,
        "est_time_s": round(split.est_time_s, 3),
        "device_hours": round(split.device_hours, 3) if sized else None,
    }


def _suite_json(stats: SuiteStats) -> dict[str, Any]:
    return {
        "suite": stats.suite,
        "backend": stats.backend,
        "device_count": stats.size,
        "enabled": stats.enabled,
        "disabled": stats.disabled,
        "est_time_s": round(stats.est_time_s, 3),
        "type": stats.type_label,
        "per_commit": stats.per_commit,
        "nightly": stats.nightly_count,
        "disabled_reasons": [
            {"filename": filename, "reason": reason}
            for filename, reason in sorted(stats.disabled_reasons)
        ],
    }


# A pool's figures go out under their own names.
POOL_FIELDS = ("backend", "schedule", "pool_size", "jobs", "makespan_s", "lower_bound_s",
               "utilization")  # fmt: skip


def _pool_json(pool: PoolResult) -> dict[str, Any]:
    figures = {name: getattr(pool, name) for name in POOL_FIELDS}
    return {**figures, "left_out": {"unsized": pool.unsized, "too_big": pool.too_big}}
