"""A run that decides before any phase that it has nothing to run still leaves its report.

Two decisions end a run before it starts: ``--affected-since`` when every changed file is
non-code (nothing selected, on purpose), and a split suite whose share for this job is empty.
Either leaves one L2 phase in the report, started and ended at once: its plan is empty, the
suite's size is kept as ``selected`` and the decision as ``affected``, so that ``simpler
report`` over every job of a split CI run counts this job as reported (a planned job without
a report is red) and reads "nothing to run" as the deliberate result it is, green also under
``--fail-if-nothing-ran``, never pytest's "no tests collected"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simpler.orchestrator.options import RunOptions
from simpler.orchestrator.run_identity import run_id_for
from simpler.reporting import report_file
from simpler.reporting.records import from_dict

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
    run_id = run_id_for(path, explicit=options.run_id, starts_run=True)
    plan: dict[str, Any] = {"planned": [], "no_device": [], "selected": suite_size}
    if affected is not None:
        plan["affected"] = affected
    start = {"event": "start", "shard": shard, "platform": options.platform, **plan}
    end = {"event": "end", "counts": {}, "returncode": 0, "duration_s": 0.0, "not_started": why}
    for fields in (start, end):
        raw = report_file.make_record("phase", run=run_id, phase="l2", **fields)
        report_file.write_record(Path(path), from_dict(raw))
