"""Combining a run's data: only its own files, every process accounted for, other checkouts
mapped onto this one, a damaged file named and the rest kept."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("coverage")

from coverage import CoverageData

from simpler.coverage.accounts import RunData
from simpler.coverage.combine import combine_runs
from simpler.coverage.reports import CoverageResult
from simpler.reporting.records import CoverageRecord


def _data_file(folder: Path, label: str, pid: int, lines: dict[str, list[int]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = CoverageData(basename=str(folder / label), suffix=f"host.pid{pid}.Xabcdefx")
    data.add_lines(lines)
    data.write()
    data.close()  # Python 3.13 warns of an SQLite connection left to the collector
    return Path(data.data_filename())


def _process(label: str, pid: int) -> CoverageRecord:
    return CoverageRecord({"type": "coverage", "event": "process", "label": label, "pid": pid})


def _ended(label: str, pid: int, why: str | None) -> CoverageRecord:
    raw = {"type": "coverage", "event": "ended", "label": label, "pid": pid, "why": why}
    return CoverageRecord(raw)


def _lines(path: Path) -> dict[str, set[int]]:
    data = CoverageData(str(path))
    data.read()
    try:
        return {name: set(data.lines(name) or ()) for name in data.measured_files()}
    finally:
        data.close()


def test_the_files_of_every_process_combine_and_each_is_accounted_for(tmp_path: Path) -> None:
    folder = tmp_path / "coverage" / "run1"
    _data_file(folder, "L2_pass", 11, {"/src/lib.py": [1, 2]})
    _data_file(folder, "L2_pass", 12, {"/src/lib.py": [3]})
    _data_file(folder, "Resource", 13, {"/src/lib.py": [4]})
    _data_file(folder, "Resource", 99, {"/src/child.py": [7]})  # a process a test started
    records = [
        _process("L2 pass", 11),
        _process("L2 pass, xdist worker gw0", 12),
        _ended("L2 pass", 11, None),
        _process("Resource child t", 13),
        _ended("Resource child t", 13, "killed at the job timeout"),
        _ended("Resource child u", 14, "killed by SIGKILL"),  # died before it could say hello
    ]
    run = RunData("run1", folder, "/src", CoverageRecord({}), records)
    combined = combine_runs([run], tmp_path / ".coverage", root="/src")
    assert _lines(tmp_path / ".coverage") == {"/src/lib.py": {1, 2, 3, 4}, "/src/child.py": {7}}
    assert combined.files_combined == 4 and combined.from_tests == 1
    assert [a.label for a in combined.partial] == ["Resource child t"]
    assert [(a.label, a.why) for a in combined.lost] == [("Resource child u", "killed by SIGKILL")]


def test_an_earlier_run_and_a_stray_coverage_file_are_never_combined(tmp_path: Path) -> None:
    _data_file(tmp_path / "coverage" / "old", "L2_pass", 5, {"/src/old.py": [1]})
    (tmp_path / ".coverage").write_bytes(b"stale")
    folder = tmp_path / "coverage" / "new"
    _data_file(folder, "L2_pass", 6, {"/src/new.py": [1]})
    run = RunData("new", folder, "/src", CoverageRecord({}), [_process("L2 pass", 6)])
    combine_runs([run], tmp_path / ".coverage", root="/src")
    assert _lines(tmp_path / ".coverage") == {"/src/new.py": {1}}


def test_another_checkouts_paths_map_onto_this_one_without_a_paths_section(tmp_path: Path) -> None:
    job_a = tmp_path / "a" / "coverage" / "r"
    job_b = tmp_path / "b" / "coverage" / "r2"
    _data_file(job_a, "L2_pass", 1, {"/runner/one/work/proj/lib.py": [1]})
    _data_file(job_b, "L2_pass", 2, {"/home/two/proj/lib.py": [2]})
    runs = [
        RunData("r", job_a, "/runner/one/work/proj", CoverageRecord({}), [_process("L2 pass", 1)]),
        RunData("r2", job_b, "/home/two/proj", CoverageRecord({}), [_process("L2 pass", 2)]),
    ]
    combine_runs(runs, tmp_path / ".coverage", root="/here/proj")
    assert _lines(tmp_path / ".coverage") == {"/here/proj/lib.py": {1, 2}}


def test_a_damaged_data_file_is_named_and_the_rest_are_combined(tmp_path: Path) -> None:
    folder = tmp_path / "coverage" / "r"
    _data_file(folder, "L2_pass", 1, {"/src/lib.py": [1]})
    torn = _data_file(folder, "Resource", 2, {"/src/lib.py": [2]})
    torn.write_bytes(b"SQLite format 3\x00 torn by a kill")
    records = [_process("L2 pass", 1), _process("Resource child t", 2)]
    run = RunData("r", folder, "/src", CoverageRecord({}), records)
    combined = combine_runs([run], tmp_path / ".coverage", root="/src")
    assert _lines(tmp_path / ".coverage") == {"/src/lib.py": {1}}
    assert [a.label for a in combined.lost] == ["Resource child t"]
    assert combined.lost[0].unreadable and torn.name in combined.unreadable[0]
    result = CoverageResult(50.0, statements=4, files=1, combined=combined)
    assert "coverage lost: Resource child t (data file unreadable: " in "\n".join(result.lines())


def test_the_coverage_line_says_the_total_what_was_combined_and_whether_it_gates() -> None:
    result = CoverageResult(83.44, statements=9739, files=142)
    assert result.lines() == [
        "Coverage: 83.4% of 9,739 lines in 142 files, 0 processes combined (advisory)"
    ]
    gated = CoverageResult(71.2, statements=10, files=1, fail_under=80)
    assert gated.gate_failed and gated.gate_reason() == "coverage 71.2% < 80%"
    assert gated.lines()[-1].endswith("(gate 80%)")
    assert not CoverageResult(80.0, fail_under=80).gate_failed


def test_many_lost_processes_are_capped_on_the_last_screen(tmp_path: Path) -> None:
    records = [_ended(f"Resource child t{i}", 100 + i, "killed by SIGKILL") for i in range(9)]
    combined = combine_runs(
        [RunData("r", tmp_path, "/src", CoverageRecord({}), records)], tmp_path / ".coverage"
    )
    lines = CoverageResult(None, combined=combined).lines()
    assert len(lines) == 6 and lines[4] == "coverage: +5 more above"
    assert lines[-1].startswith("Coverage: no data, 0 processes combined, 9 lost")


def test_a_killed_process_whose_file_holds_no_line_is_lost_not_partial(tmp_path: Path) -> None:
    folder = tmp_path / "coverage" / "r"
    _data_file(folder, "Resource", 7, {"/src/lib.py": []})  # written at start, never saved
    _data_file(folder, "Resource", 8, {"/src/lib.py": []})  # ended by itself, ran no line
    records = [
        _process("Resource child t", 7),
        _ended("Resource child t", 7, "killed by SIGKILL"),
        _process("Resource child u", 8),
        _ended("Resource child u", 8, None),
    ]
    combined = combine_runs(
        [RunData("r", folder, "/src", CoverageRecord({}), records)], tmp_path / ".coverage"
    )
    assert [a.label for a in combined.lost] == ["Resource child t"]
    assert combined.partial == []
