"""``simpler run --plan FILE --job ID``: the share of the collected suite one planned job runs.

The L2 files and Resource tests its plan entry names; a unit the plan does not know goes to
one job by a stable hash among the jobs with enough devices, so it runs exactly once; units
the suite no longer has are passed over. A registry's plan, another suite's plan and an
unknown job are usage errors (docs/fleet.md, "Run one job").
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from simpler.split.listing import SuiteListing
from simpler.split.sharding import Shard
from simpler.usage import UsageError

__all__ = ["job_share"]

PROG = "simpler run"


def job_share(listing: SuiteListing, plan: dict[str, Any], job_id: str, path: Path) -> Shard:
    jobs = sorted(plan["jobs"], key=lambda job: job["id"])
    mine = next((job for job in jobs if job["id"] == job_id), None)
    if mine is None:
        known = ", ".join(job["id"] for job in jobs[:6]) + (", ..." if len(jobs) > 6 else "")
        raise UsageError(f"{PROG}: --job {job_id} is not in the plan {path} (its jobs: {known})")
    owner = {unit: job["id"] for job in jobs for unit in job["units"]}
    files = listing.l2_files()
    if owner and not any(unit in owner for unit in [*files, *(t.nodeid for t in listing.resource)]):
        raise UsageError(
            f"{PROG}: the plan {path} names none of this suite's tests: another suite's?"
        )
    share = Shard()
    for path_of_file in sorted(files):
        if (owner.get(path_of_file) or _stable_job(path_of_file, jobs, 1)) == job_id:
            share.l2_files.append(path_of_file)
    for test in listing.resource:
        if (owner.get(test.nodeid) or _stable_job(test.nodeid, jobs, test.devices)) == job_id:
            share.resource.append(test)
    return share


def _stable_job(name: str, jobs: list[dict[str, Any]], devices: int) -> str:
    """The job a unit unknown to the plan goes to: the same in every job of the matrix."""
    fitting = [job["id"] for job in jobs if job["devices"] >= devices]
    if not fitting:
        raise UsageError(
            f"{PROG}: {name} needs {devices} devices; no job of the plan has as many (plan again)"
        )
    digest = int(hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest(), 16)
    return str(fitting[digest % len(fitting)])
