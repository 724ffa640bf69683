"""Reading a plan file (``simpler plan --out``) back: for the job that runs its share, and for
the merged summary that checks every planned job reported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from simpler.usage import UsageError

__all__ = ["load_suite_plan"]


def load_suite_plan(path: Path, prog: str) -> dict[str, Any]:
    """The plan of a suite, checked for the fields its readers use; a usage error names
    ``prog`` and the file when it is not one."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise UsageError(f"{prog}: --plan {path}: not a plan file ({error})") from None
    if not isinstance(document, dict):
        document = {}
    jobs = document.get("jobs")
    platform = document.get("platform")
    if document.get("schema") != 1 or not isinstance(jobs, list) or not all(
        isinstance(job, dict) and isinstance(job.get("id"), str)
        and isinstance(job.get("devices"), int) and isinstance(job.get("units"), list)
        for job in jobs
    ) or not (platform is None or isinstance(platform, str)):  # fmt: skip
        raise UsageError(f"{prog}: --plan {path}: not a plan file (simpler plan --out writes one)")
    if any(not isinstance(unit, str) for job in jobs for unit in job["units"]):
        raise UsageError(f"{prog}: --plan {path} plans a registry, not a suite: it cannot run")
    planned: dict[str, Any] = document
    return planned
