"""Turn ``nox -l --json`` into the CI job matrix: one entry per session, and one per planned
job for the sessions a plan file (``simpler plan --out``) splits.

    nox -l --json -t ci | python scripts/ci_matrix.py --plan st_a5=plans/st_a5.json

prints ``matrix={"include": [{"session": "tests", "runner": "ubuntu-latest", "devices": "",
"job": ""}, {"session": "st_a5", "runner": "ubuntu-latest", "devices": "0-1", "job":
"ubuntu-latest-1"}, ...]}``, the line a GitHub Actions step appends to ``$GITHUB_OUTPUT``:
each job runs on its plan's runner label, with the device ids of that runner.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

DEFAULT_RUNNER = "ubuntu-latest"


def _session_plans(items: list[str]) -> dict[str, list[dict[str, Any]]]:
    """SESSION=FILE pairs: each session's planned jobs."""
    plans: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        name, _, path = item.partition("=")
        if not name or not path:
            raise ValueError(f"bad --plan {item!r}: expected SESSION=FILE")
        try:
            jobs = json.loads(Path(path).read_text(encoding="utf-8"))["jobs"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ValueError(f"--plan {path}: not a plan file of simpler plan ({error})") from None
        if not jobs:
            raise ValueError(f"--plan {path} has no jobs: the session would run nothing")
        plans[name] = jobs
    return plans


def _device_ids(count: int) -> str:
    return "0" if count == 1 else f"0-{count - 1}"


def matrix(
    sessions: list[dict[str, Any]], plans: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    include = []
    for entry in sessions:
        name = str(entry["session"])
        for job in plans.get(name, []):
            devices = _device_ids(int(job["devices"]))
            entry_of_job = {"runner": str(job["runner"]), "devices": devices, "job": job["id"]}
            include.append({"session": name, **entry_of_job})
        if name not in plans:
            include.append({"session": name, "runner": DEFAULT_RUNNER, "devices": "", "job": ""})
    unknown = sorted(set(plans) - {str(entry["session"]) for entry in sessions})
    if unknown:
        raise ValueError(f"--plan for session(s) nox did not list: {', '.join(unknown)}")
    return {"include": include}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--plan", action="append", default=[], metavar="SESSION=FILE",
                        help="run SESSION as the jobs of this plan file (repeatable)")  # fmt: skip
    args = parser.parse_args()
    try:
        sessions = json.load(sys.stdin)
    except ValueError as error:
        print(f"ci_matrix: stdin is not nox -l --json output: {error}", file=sys.stderr)
        return 2
    if not sessions:
        print("ci_matrix: nox listed no sessions: the matrix would be empty", file=sys.stderr)
        return 2
    try:
        print("matrix=" + json.dumps(matrix(sessions, _session_plans(args.plan))))
    except ValueError as error:
        print(f"ci_matrix: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
