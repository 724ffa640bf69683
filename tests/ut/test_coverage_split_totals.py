"""The coverage line's total, its files analysed on two cores, is the one report's total."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

coverage = pytest.importorskip("coverage")

from coverage.report import SummaryReporter  # noqa: E402

from simpler.coverage.split_totals import MIN_FILES, split_totals  # noqa: E402


def _project(tmp_path: Path, files: int) -> tuple[Path, list[str]]:
    sources = []
    for i in range(files):
        source = tmp_path / f"module_{i}.py"
        body = "".join(f"def f{j}(x):\n    return x + {j}\n\n" for j in range(i % 7 + 1))
        source.write_text(body)
        sources.append(str(source))
    data = coverage.CoverageData(basename=str(tmp_path / ".coverage"))
    # Each module ran its first function: its def lines and one body line.
    data.add_lines({path: [1, 2, *range(4, 3 * (i % 7 + 1), 3)] for i, path in enumerate(sources)})
    data.write()
    data.close()  # Python 3.13 warns of an SQLite connection left to the collector
    return tmp_path / ".coverage", sources


def _one_report(data_file: Path) -> tuple[int, int, float]:
    cov = coverage.Coverage(data_file=str(data_file), config_file=False)
    cov.load()
    reporter = SummaryReporter(cov)
    reporter.report(None, io.StringIO())
    cov.get_data().close()
    return reporter.total.n_statements, reporter.total.n_missing, reporter.total.pc_covered


def test_the_split_total_is_the_one_reports_total(tmp_path: Path) -> None:
    data_file, sources = _project(tmp_path, MIN_FILES + 9)
    split = split_totals(data_file, False, sources)
    assert split is not None
    assert (split.n_statements, split.n_missing, split.pc_covered) == _one_report(data_file)
    assert split.n_files == len(sources)


def test_a_few_files_are_not_worth_a_fork(tmp_path: Path) -> None:
    data_file, sources = _project(tmp_path, 3)
    assert split_totals(data_file, False, sources) is None
