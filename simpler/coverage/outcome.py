"""The coverage of the runs a summary covers: one report file's run, or several CI jobs'.

Each report file's measured runs have their data beside it (``coverage/<run>/``); they are
combined into the project's ``.coverage`` (or its config's ``[run] data_file``) and reported
as the first run asked, unless the report command asks otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from simpler.coverage.accounts import RunData, runs_measured
from simpler.coverage.combine import combine_runs
from simpler.coverage.options import CovOptions
from simpler.coverage.reports import CoverageResult, write_reports
from simpler.reporting.records import Record

__all__ = ["code_coverage"]


def code_coverage(
    sources: Sequence[tuple[Path, Iterable[Record]]],
    runs: set[str],
    override: CovOptions | None = None,
    combined: Callable[[Path], None] | None = None,
) -> CoverageResult | None:
    """Combine and report the measured ones of ``runs`` in ``sources`` (report file, records);
    None when none of them was measured. ``combined``: called with the combined data file
    before the reports (``--impact-map`` builds its map beside them)."""
    measured: list[RunData] = []
    for path, records in sources:
        measured += [run for run in runs_measured(path, records) if run.run_id in runs]
    if not measured:
        return None
    options = _options(measured[0], override)
    done = combine_runs(measured, _data_file(options))
    if combined is not None:
        combined(done.data_file)
    return write_reports(done, options)


def _options(first: RunData, override: CovOptions | None) -> CovOptions:
    options = CovOptions.from_record(first.settings)
    if override is None:
        return options
    if override.reports:
        options = replace(options, reports=override.reports)
    if override.fail_under is not None:
        options = replace(options, fail_under=override.fail_under)
    return options


def _data_file(options: CovOptions) -> Path:
    """The project's combined data file: ``[run] data_file`` of its config, else ``.coverage``."""
    import coverage

    cov = coverage.Coverage(config_file=options.config or True)
    return Path(str(cov.get_option("run:data_file"))).resolve()
