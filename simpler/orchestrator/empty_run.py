"""A run that decides before any phase that it has nothing to run still leaves its report.

Two decisions end a run before it starts: ``--affected-since`` when every changed file is
non-code (nothing selected, on purpose), and a split suite whose share for this job is empty.
Either leaves one L2 phase in the report, started and ended at once: it plans no test, the
suite's size is kept as ``selected`` and the decision as ``affected``, so that ``simpler
report`` over every job of a split CI run counts this job as reported (a planned job without
a report is red) and reads "nothing to run" as the deliberate result it is, green also under
``--fail-if-nothing-ran``, never pytest's "no tests collected"."""

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
