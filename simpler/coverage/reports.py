"""The combined data as the reports asked for, the summary's coverage line and the gate.

The reports are coverage.py's own (text, XML, HTML, JSON, LCOV), from the project's
coverage config, so that ``exclude_lines``, ``omit``, ``precision`` and the rest apply as
they do to ``coverage report``.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from simpler.coverage.accounts import ProcessAccount
from simpler.coverage.combine import Combined
from simpler.coverage.options import CovOptions, Report
from simpler.coverage.split_totals import split_totals

if TYPE_CHECKING:
    from coverage import Coverage

__all__ = ["LOST_CAP", "CoverageResult", "write_reports"]

LOST_CAP = 5  # processes named on the last screen; the rest are counted


@dataclass
class CoverageResult:
    """What the summary says of a run's coverage."""

    percent: float | None  # None: no data at all
    statements: int = 0
    files: int = 0
    combined: Combined | None = None
    fail_under: float | None = None
    term_text: str = ""  # the term report, printed above the summary
    written: list[str] = field(default_factory=list)  # the report files written
    unwritten: list[str] = field(default_factory=list)  # "KIND PATH: why"
    precision: int = 1

    @property
    def gate_failed(self) -> bool:
        below = self.percent is None or self.percent < (self.fail_under or 0)
        return self.fail_under is not None and below

    @property
    def percent_text(self) -> str:
        return "no data" if self.percent is None else f"{self.percent:.{self.precision}f}%"

    def gate_reason(self) -> str:
        """For the verdict line: ``coverage 71.2% < 80%``."""
        return f"coverage {self.percent_text} < {self.fail_under:g}%"

    def lines(self) -> list[str]:
        """The summary's coverage lines: each process lost or partial, then the total."""
        combined = self.combined
        named: list[str] = []
        if combined is not None:
            for account in combined.lost:
                named.append(f"coverage lost: {account.label} ({_why_lost(account)})")
            for account in combined.partial:
                why = _why_partial(account)
                named.append(f"coverage partial: {account.label} ({why}; what it saved is in)")
            strays = len(combined.unreadable) - sum(len(a.unreadable) for a in combined.accounts)
            if strays > 0:
                named.append(f"coverage partial: {strays} data file(s) of processes tests "
                             "started could not be read")  # fmt: skip
        if len(named) > LOST_CAP:
            named = [*named[: LOST_CAP - 1], f"coverage: +{len(named) - LOST_CAP + 1} more above"]
        return [*named, self._total_line()]

    def all_named(self) -> list[str]:
        """Every lost or partial process, uncapped (printed above the summary)."""
        combined = self.combined
        if combined is None:
            return []
        return [f"  {a.label}: {_why_lost(a)}" for a in combined.lost] + [
            f"  {a.label}: {_why_partial(a)}" for a in combined.partial
        ]

    def _total_line(self) -> str:
        combined = self.combined
        processes = combined.files_combined if combined else 0
        damaged = []
        if combined is not None and combined.partial:
            damaged.append(f"{len(combined.partial)} partial")
        if combined is not None and combined.lost:
            damaged.append(f"{len(combined.lost)} lost")
        gate = "advisory" if self.fail_under is None else f"gate {self.fail_under:g}%"
        of = (
            f" of {self.statements:,} lines in {self.files:,} files"
            if self.percent is not None
            else ""
        )
        more = f", {', '.join(damaged)}" if damaged else ""
        return f"Coverage: {self.percent_text}{of}, {processes} processes combined{more} ({gate})"


def _why_lost(account: ProcessAccount) -> str:
    if account.unreadable:
        return f"data file unreadable: {'; '.join(account.unreadable)}"
    return account.why or "wrote no data"


def _why_partial(account: ProcessAccount) -> str:
    return "; ".join([*([account.why] if account.why else []), *account.unreadable])


def write_reports(combined: Combined, options: CovOptions) -> CoverageResult:
    """The reports ``options`` ask for, from the combined data; the figures for the summary."""
    import coverage

    cov = coverage.Coverage(data_file=str(combined.data_file), config_file=options.config or True)
    cov.load()
    try:
        return _reported(cov, combined, options)
    finally:
        cov.get_data().close()  # its SQLite connection: left to the collector, 3.13 warns


def _reported(cov: Coverage, combined: Combined, options: CovOptions) -> CoverageResult:
    import coverage

    result = CoverageResult(None, combined=combined, fail_under=options.fail_under)
    precision = cov.get_option("report:precision")
    result.precision = precision if isinstance(precision, int) and precision > 0 else 1
    if not cov.get_data().measured_files():
        return result
    term = next((r for r in options.reports if r.kind.startswith("term")), None)
    _totals(cov, result, term)
    for report in options.reports:
        if report.kind.startswith("term") or not report.kind:
            continue
        try:
            _file_report(cov, report)
            result.written.append(f"{report.kind} {report.target}")
        except (coverage.CoverageException, OSError) as error:
            result.unwritten.append(f"--cov-report {report.kind}:{report.target}: {error}")
    return result


def _totals(cov: Coverage, result: CoverageResult, term: Report | None) -> None:
    """The total (and the term report when asked): one analysis of every measured file."""
    from coverage.report import SummaryReporter

    if term is None:  # the figure only: the files' analysis can be split over two cores
        split = split_totals(
            Path(str(cov.get_option("run:data_file"))), cov.config.config_file or True,
            sorted(cov.get_data().measured_files()),
        )  # fmt: skip
        if split is not None:
            result.percent = split.pc_covered
            result.statements, result.files = split.n_statements, split.n_files
            return
    text = io.StringIO()
    cov.config.show_missing = term is not None and term.kind == "term-missing"
    cov.config.skip_covered = bool(term and term.skip_covered)
    reporter = SummaryReporter(cov)
    try:
        percent = reporter.report(None, text)
    except Exception as error:  # coverage.py's NoDataError and friends: no figure, said once
        result.term_text = f"coverage: no report: {error}\n"
        return
    result.percent = percent
    result.statements = reporter.total.n_statements
    result.files = reporter.total.n_files
    if term is not None:
        result.term_text = text.getvalue()


def _file_report(cov: Coverage, report: Report) -> None:
    target = report.target
    if report.kind == "html":
        cov.html_report(directory=target)
        return
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    if report.kind == "xml":
        cov.xml_report(outfile=target)
    elif report.kind == "json":
        cov.json_report(outfile=target)
    else:
        cov.lcov_report(outfile=target)
