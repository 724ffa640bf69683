"""The merged summary of a planned matrix: every job of the plan must have sent its report.

A job that never uploaded one (its runner never came, it was cancelled, its upload failed)
ran none of its tests, and a merge that only counts what arrived would call the rest green.
``simpler report --plan F`` looks for each planned job's run among the report files: a run
whose phase records say ``shard: "job ID"`` on the plan's platform. The jobs not found are
named in the verdict line and make it red.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from simpler.contract import EXIT_FAILED
from simpler.reporting.records import PhaseRecord, Record
from simpler.reporting.summary import Ruling
from simpler.split.plan_file import load_suite_plan

__all__ = ["ExpectedJob", "expected_jobs", "missing_jobs", "missing_ruling"]


@dataclass(frozen=True)
class ExpectedJob:
    id: str
    platform: str | None  # None: a plan that does not say; any platform's report counts
    runner: str
    devices: int
    units: int

    def __str__(self) -> str:
        where = f"{self.platform}, " if self.platform else ""
        return f"{self.id} ({where}{self.runner}, {self.units} unit(s))"


def expected_jobs(plans: Sequence[Path], prog: str) -> list[ExpectedJob]:
    """The jobs of every plan file (a usage error for a file that is not a suite's plan)."""
    expected = []
    for path in plans:
        plan = load_suite_plan(path, prog)
        for job in plan["jobs"]:
            expected.append(
                ExpectedJob(
                    id=job["id"],
                    platform=plan.get("platform"),
                    runner=str(job.get("runner", "")),
                    devices=job["devices"],
                    units=len(job["units"]),
                )
            )
    return expected


def missing_jobs(records: Iterable[Record], expected: Sequence[ExpectedJob]) -> list[ExpectedJob]:
    if not expected:
        return []  # no --plan: every summary would otherwise walk all its records for nothing
    reported: set[tuple[object, object]] = set()
    for record in records:
        if isinstance(record, PhaseRecord) and record.shard:
            reported.add((record.platform, record.shard))
            reported.add((None, record.shard))
    return [job for job in expected if (job.platform, f"job {job.id}") not in reported]


def missing_ruling(missing: Sequence[ExpectedJob], ruling: Ruling | None) -> Ruling | None:
    """The run's ruling with the missing jobs added: red, whatever the reports say."""
    if not missing:
        return ruling
    reason = f"planned job(s) without a report: {', '.join(map(str, missing))}"
    if ruling is None:
        return Ruling(EXIT_FAILED, reason)
    return Ruling(max(ruling.code, EXIT_FAILED), f"{ruling.reason}; {reason}")
