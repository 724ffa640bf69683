"""The end of every run: read the report files, print the summary last, set the exit code.

Under GitHub Actions it also annotates each failure (and a run where nothing ran) and
appends the markdown summary to ``$GITHUB_STEP_SUMMARY``; with ``--junit`` it writes JUnit
XML. Files are written and annotations printed before the summary, so that the verdict
line is the last line and its exit code is the one returned.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from simpler.ci import gha
from simpler.ci.quarantine_markup import quarantine_markdown, quarantine_warnings
from simpler.contract import EXIT_INFRA, EXIT_NO_TESTS, EXIT_USAGE
from simpler.contract.settings import REPORT_ENV
from simpler.coverage.options import CovOptions
from simpler.coverage.reports import CoverageResult
from simpler.orchestrator.context import RunContext
from simpler.reporting import report_file as report
from simpler.reporting.notices import report_text
from simpler.reporting.quarantine_file import QuarantineFile
from simpler.reporting.records import CoverageRecord, PhaseRecord, TestRecord
from simpler.reporting.resource_block import latest_children
from simpler.reporting.summary import Ruling, Summary, select_latest_runs, summarize
from simpler.split.missing_jobs import ExpectedJob, missing_jobs, missing_ruling

if TYPE_CHECKING:
    from simpler.impact.map_child import MapChild
    from simpler.impact.run_map import MapTarget

__all__ = ["ReportOptions", "print_report", "report_phase"]


@dataclass(frozen=True)
class ReportOptions:
    fail_on_flaky: bool = False
    fail_if_nothing_ran: bool = False
    tail_lines: int = 80
    junit: Path | None = None
    timeline: Path | None = None
    ruling: Ruling | None = None  # an exit code the run decided before its summary
    test_quarantine: QuarantineFile | None = None  # what the summary says of quarantined tests
    planned_jobs: tuple[ExpectedJob, ...] = ()  # --plan: each must have sent its report
    coverage: CovOptions | None = None  # simpler report's --cov-report/--cov-fail-under
    impact: MapTarget | None = None  # simpler run --impact-map: where the run's map is kept

    @classmethod
    def of(cls, settings: SummarySettings, **more: Any) -> ReportOptions:
        """The options a run's settings or ``simpler report``'s arguments give, and ``more``."""
        return cls(
            fail_on_flaky=settings.fail_on_flaky,
            fail_if_nothing_ran=settings.fail_if_nothing_ran,
            tail_lines=settings.tail_lines,
            junit=settings.junit,
            **more,
        )


class SummarySettings(Protocol):
    """What the summary takes from a run's settings or from ``simpler report``'s options
    (read only: the command's options are frozen)."""

    @property
    def fail_on_flaky(self) -> bool: ...
    @property
    def fail_if_nothing_ran(self) -> bool: ...
    @property
    def tail_lines(self) -> int: ...
    @property
    def junit(self) -> Path | None: ...


WHERE_RUNS_GO = (
    f"a run writes its records where simpler run --report names, else ${REPORT_ENV}, "
    f"else {report.DEFAULT_REPORT}"
)


def print_report(paths: Sequence[str | Path], options: ReportOptions) -> int:
    """Print the summary of ``paths``: the latest run of each, merged."""
    # Records are acyclic JSON trees: the cyclic collector would only rescan them, again and
    # again, while a large report loads (about a third of the time on 100k records).
    gc.disable()
    try:
        return _print_report(paths, options)
    finally:
        gc.enable()


def _print_report(paths: Sequence[str | Path], options: ReportOptions) -> int:
    loaded = _load(paths)
    if isinstance(loaded, int):
        return loaded
    per_file, malformed = loaded
    empty = [str(path) for path, records in zip(paths, per_file, strict=True) if not records]
    if empty and not malformed:
        for name in empty:
            print(f"simpler report: {name} holds no run (no record in it): {WHERE_RUNS_GO}",
                  file=sys.stderr)  # fmt: skip
        if len(empty) == len(per_file):
            print(f"simpler: nothing ran: no run in {', '.join(empty)} -> exit {EXIT_NO_TESTS}")
            return EXIT_NO_TESTS
    records = select_latest_runs(per_file)
    sources = [
        (Path(path), file_records) for path, file_records in zip(paths, per_file, strict=True)
    ]
    return _print_records(records, malformed, options, sources)


def _print_records(
    records: list[report.Record],
    malformed: int,
    options: ReportOptions,
    sources: list[tuple[Path, list[report.Record]]],
) -> int:
    sys.stdout.flush()
    unwritten = _write_files(records, options)
    map_child = _impact_map_child(records, sources, options.impact) if options.impact else None
    told = map_child.combined if map_child is not None else None
    covered = _code_coverage(records, sources, options, told)
    if covered is not None and covered.unwritten:
        unwritten = ", ".join(filter(None, [unwritten, *covered.unwritten]))
    if options.impact is not None:
        unwritten = ", ".join(filter(None, [unwritten, _impact_map_kept(map_child)]))
    ruling = options.ruling
    if unwritten and (ruling is None or ruling.code == EXIT_USAGE):
        ruling = Ruling(EXIT_INFRA, f"{unwritten} could not be written")
    missing = missing_jobs(records, options.planned_jobs)
    ruling = missing_ruling(missing, ruling)
    summary = summarize(
        records,
        malformed=malformed,
        fail_on_flaky=options.fail_on_flaky,
        fail_if_nothing_ran=options.fail_if_nothing_ran,
        tail_lines=options.tail_lines,
        ruling=ruling,
        test_quarantine=options.test_quarantine,
        code_coverage=covered.lines() if covered is not None else [],
        coverage_gate=covered.gate_reason()
        if covered is not None and covered.gate_failed
        else None,
    )
    text = report_text(records, summary.text)
    if gha.is_github_actions():
        _annotate(summary)
        for job in missing:
            print(gha.workflow_command("error", f"no report from planned job {job}",
                                       {"title": "Planned job without a report"}))  # fmt: skip
        # The summary repeats test output: fenced, it cannot issue workflow commands.
        text = gha.fenced(text, gha.new_stop_token())
    print(text, end="" if text.endswith("\n") else "\n", flush=True)
    if gha.is_github_actions():
        _step_summary(summary, records, options.timeline, covered)
    return summary.exit_code


def _code_coverage(
    records: list[report.Record],
    sources: list[tuple[Path, list[report.Record]]],
    options: ReportOptions,
    combined: Callable[[Path], None] | None = None,
) -> CoverageResult | None:
    """The combined coverage of the measured runs among ``records``; its table and every
    process it lost printed now, above the summary (the summary's last screen names them too)."""
    if not any(isinstance(r, CoverageRecord) for r in records):
        return None
    from simpler.coverage.outcome import code_coverage

    runs = {r.run for r in records if r.run}
    covered = code_coverage(sources, runs, options.coverage, combined)
    if covered is None:
        return None
    print(covered.term_text, end="")
    named = covered.all_named()
    if named:
        print("Coverage data missing or partial:", *named, sep="\n")
    return covered


def _launches(records: list[report.Record]) -> dict[str, dict[str, tuple[str, ...]]]:
    """Each test's kernels, over all its attempts (a retry may launch what the first did not)."""
    launches: dict[str, dict[str, tuple[str, ...]]] = {}
    for record in records:
        if isinstance(record, TestRecord) and record.kernels:
            launches.setdefault(record.nodeid, {}).update(record.kernels)
    return launches


def _impact_map_child(
    records: list[report.Record],
    sources: list[tuple[Path, list[report.Record]]],
    target: MapTarget,
) -> MapChild | None:
    """``--impact-map``: the map built in a child beside the coverage's combine and report
    (``simpler.impact.map_child``), from the files the run's processes measured."""
    from simpler.coverage.accounts import runs_measured
    from simpler.impact.map_child import MapChild, measured_files

    runs = {r.run for r in records if r.run}
    data = [f for path, recs in sources for run in runs_measured(path, recs)
            if run.run_id in runs for f in run.data_files()]  # fmt: skip
    files = measured_files(data)
    return MapChild(target, _launches(records), files) if files else None


def _impact_map_kept(child: MapChild | None) -> str:
    """The map's line printed; what could not be kept, if not (named, exit 3)."""
    if child is None:
        return "the impact map (the run measured nothing)"
    try:
        print(child.line(), flush=True)
    except RuntimeError as error:  # the history, the disk, a data file
        return f"the impact map ({error})"
    return ""


def _write_files(records: list[report.Record], options: ReportOptions) -> str:
    """Write the JUnit and timeline files asked for; the names of those that failed."""
    failed = []
    if options.junit is not None:
        from simpler.reporting.junit import write_junit

        if not _wrote(write_junit, records, options.junit):
            failed.append(f"--junit {options.junit}")
    if options.timeline is not None:
        from simpler.reporting.timeline import render_timeline

        if not _wrote(render_timeline, records, options.timeline):
            failed.append(f"--timeline {options.timeline}")
    return ", ".join(failed)


def _load(paths: Sequence[str | Path]) -> tuple[list[list[report.Record]], int] | int:
    per_file: list[list[report.Record]] = []
    malformed = 0
    for path in paths:
        try:
            contents = report.read_records(path)
        except report.ReportUnreadable as error:
            print(f"error: {error}", file=sys.stderr)
            return EXIT_INFRA
        per_file.append(contents.records)
        malformed += contents.malformed
    if malformed and not any(per_file):
        return _nothing_readable(paths, malformed)
    return per_file, malformed


def _nothing_readable(paths: Sequence[str | Path], malformed: int) -> int:
    names = ", ".join(map(str, paths))
    print(f"error: no readable record in {names} ({malformed} malformed line(s))", file=sys.stderr)
    return EXIT_INFRA


def _annotate(summary: Summary) -> None:
    for line in [*gha.error_annotations(summary.failures), *quarantine_warnings(summary)]:
        print(line)
    warning = gha.nothing_ran_annotation(summary)
    if warning is not None:
        print(warning)


def _step_summary(
    summary: Summary,
    records: list[report.Record],
    timeline: Path | None,
    covered: CoverageResult | None,
) -> None:
    if not os.environ.get("GITHUB_STEP_SUMMARY"):
        return
    markdown = gha.step_summary_markdown(summary, latest_children(records))
    markdown += quarantine_markdown(summary)
    if covered is not None:
        markdown += "\n\n" + "\n\n".join(covered.lines()) + "\n"
    if timeline is not None and timeline.exists():
        # The step summary cannot embed files: it names the one the job uploads.
        markdown += f"\n\nTimeline of the run: `{timeline}` (in this job's artifacts)\n"
    try:
        gha.append_step_summary(markdown)
    except gha.StepSummaryUnwritable as error:
        print(f"::warning::{gha.escape_data(str(error))}")


def _wrote(
    write: Callable[[list[report.Record], Path], None], records: list[report.Record], path: Path
) -> bool:
    """Write one of the run's files; one that cannot be written is said in one line."""
    try:
        write(records, path)
    except OSError as error:  # JUnitUnwritable, TimelineUnwritable: already one clear line
        print(f"error: {error}", file=sys.stderr)
        return False
    return True


def report_phase(ctx: RunContext) -> int:
    """The summary of this run, printed last; its exit code is the run's.

    Only this run's lines of the report file are parsed, from where the run's follower
    stopped: a file holding a long history costs no more than an empty one."""
    try:
        follower = ctx.followed()
        records = follower.records()
    except report.ReportUnreadable as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_INFRA
    # This phase's own end record is not written yet: do not call the run incomplete for it.
    records = [r for r in records if not (isinstance(r, PhaseRecord) and r.phase == "report")]
    setup = ctx.setup
    if follower.malformed and not records:
        return _nothing_readable([setup.report], follower.malformed)
    options = ReportOptions.of(
        setup.options, ruling=ctx.state.ruling, test_quarantine=setup.test_quarantine,
        impact=setup.impact_map,
    )  # fmt: skip
    gc.disable()  # see print_report
    try:
        return _print_records(records, follower.malformed, options, [(setup.report, records)])
    finally:
        gc.enable()
