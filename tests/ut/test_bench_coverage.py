"""The bench's combine workload: data files a run's combine takes for a run's own, processes
that differ but overlap, and lines no test runs left out of every one of them."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("coverage")

from bench_coverage import DEAD, measured_lines, module_lines, write_process_data

from simpler.coverage.accounts import RunData
from simpler.coverage.combine import combine_runs
from simpler.reporting.records import CoverageRecord


def test_the_workload_combines_to_the_union_it_promises(tmp_path: Path) -> None:
    root, data_dir = tmp_path / "checkout", tmp_path / "checkout" / "coverage" / "bench"
    union = write_process_data(root, data_dir, processes=4)
    run = RunData("bench", data_dir, str(root), CoverageRecord({}), [])
    assert len(run.data_files()) == 4  # named as a run's files are, or the combine skips them

    combined = combine_runs([run], tmp_path / "combined", root=str(root))

    assert combined.files_combined == 4 and not combined.unreadable
    assert measured_lines(tmp_path / "combined") == union
    per_process = [measured_lines(path) for path in run.data_files()]
    module = sorted(union)[0]
    assert len({frozenset(lines[module]) for lines in per_process}) > 1  # processes differ
    assert all(Path(path).is_file() for path in union)  # real sources, for a report
    top, bodies = module_lines()
    assert all(set(top) <= lines for lines in union.values())  # every module imported
    dead = {line for body in bodies[-DEAD:] for line in body}
    assert not any(dead & lines for lines in union.values())  # the dead functions never ran
