"""A plan as a person reads it (a table), as the plan file (JSON, docs/design.md's format), and as
GitHub Actions' ``strategy.matrix`` (``include``: one entry a job)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from simpler.fleet.planner import Plan

__all__ = ["github_matrix", "plan_document", "plan_table"]


def plan_document(
    plan: Plan, unit_value: Callable[[str], Any] = str, platform: str | None = None
) -> dict[str, Any]:
    """The plan file: ``unit_value`` turns a unit's key back into its JSON value (a registry
    index is a number). A suite's plan names the platform it was collected on: the merged
    summary looks for each job's report of that platform."""
    platform_field = {} if platform is None else {"platform": platform}
    return {
        "schema": 1,
        **platform_field,
        "target_s": plan.target_s,
        "classes": [
            {
                "devices": c.runner.devices,
                "runner": c.runner.label,
                "jobs": len(c.jobs),
                "est_wall_s": round(c.est_wall_s, 3),
                "lower_bound_s": round(c.lower_bound_s, 3),
                "utilization": round(c.utilization, 4),
            }
            for c in plan.classes
        ],
        "jobs": [
            {
                "id": job.id,
                "runner": job.runner,
                "devices": job.devices,
                "est_wall_s": round(job.est_wall_s, 3),
                "units": [unit_value(key) for key in job.units],
            }
            for job in plan.jobs
        ],
    }


def github_matrix(plan: Plan) -> str:
    include = [{"runner": j.runner, "devices": j.devices, "job": j.id} for j in plan.jobs]
    return json.dumps({"include": include}, separators=(",", ":"))


def plan_table(plan: Plan, sources: dict[str, int]) -> str:
    """Per class: jobs, the slowest job's estimated wall, the lower bound, the utilization."""
    rows = [f"{'runner':16} {'devices':>7} {'jobs':>5} {'est wall':>9} {'bound':>9} {'util':>6}"]
    for c in plan.classes:
        rows.append(
            f"{c.runner.label:16} {c.runner.devices:>7} {len(c.jobs):>5} "
            f"{_minutes(c.est_wall_s):>9} {_minutes(c.lower_bound_s):>9} {c.utilization:>6.0%}"
        )
    target = f", target {_minutes(plan.target_s)}" if plan.target_s is not None else ""
    rows.append(f"{len(plan.jobs)} job(s), estimated wall {_minutes(plan.est_wall_s)}{target}")
    planned_on = ", ".join(f"{count} on {source}" for source, count in sorted(sources.items()))
    rows.append(f"units planned on: {planned_on or 'nothing'}")
    rows += [f"note: {note}" for note in plan.notes]
    return "\n".join(rows) + "\n"


def _minutes(seconds: float | None) -> str:
    """Minutes where a CI job's wall is minutes; a plan of seconds in seconds, not 0.0 min."""
    if seconds is None:
        return "-"
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"
