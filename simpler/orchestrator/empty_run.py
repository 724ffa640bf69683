"""A run that decides before any phase that it has nothing to run still leaves its report.

An empty share or a change of non-code files only: one L2 phase, started and ended at once,
so that the merged report counts the job as reported and its emptiness as deliberate
(docs/fleet.md, "Merge")."""

from __future__ import annotations

from typing import Any

from simpler.orchestrator.options import RunOptions
from simpler.orchestrator.run_identity import run_id_for
from simpler.reporting import report_file
from simpler.reporting.records import PhaseRecord, RecordOrigin

__all__ = ["record_nothing_to_run"]


def record_nothing_to_run(
    options: RunOptions,
    shard: str | None,
    suite_size: int,
    why: str,
    affected: dict[str, Any] | None = None,
) -> None:
    """Write the empty L2 phase of this run: ``why`` names the decision."""
    path = report_file.report_path(options.report).resolve()
    origin = RecordOrigin(run_id_for(path, explicit=options.run_id, starts_run=True), "l2")
    start = origin.build(PhaseRecord, event="start", shard=shard, platform=options.platform,
                         planned=[], no_device=[], selected=suite_size)  # fmt: skip
    if affected is not None:
        start = start.replace(affected=affected)
    end = origin.build(PhaseRecord, event="end", counts={}, returncode=0, duration_s=0.0,
                       not_started=why)  # fmt: skip
    for record in (start, end):
        report_file.write_record(path, record)
