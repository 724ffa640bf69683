"""--collect on a suite whose conftest sizes its tests with ``pytest_simpler_device_count``:
only pytest can ask the hook, so such a path is collected through pytest, not read by ast."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from simpler.capacity.collect import DEFAULT_EST_S, collect
from simpler.capacity.collect_pytest import sized_by_hook
from simpler.capacity.model import InputError

HOOK_CONFTEST = """
import os

CASES = {"single": {"devices": 1}, "quad": {"devices": 4}}

def pytest_simpler_device_count(item):
    callspec = getattr(item, "callspec", None)
    case = callspec.params.get("case") if callspec is not None else None
    if case not in CASES:
        return None
    return 0 if os.environ.get("CASES_BAD") else CASES[case]["devices"]
"""

SUITE = """
import pytest

@pytest.mark.parametrize("case", ["single", "quad"])
def test_case(case):
    pass

@pytest.mark.device_count(2, est=30)
def test_marked():
    pass

def test_l2(worker):
    pass
"""

NO_SKIP = frozenset[str]()


def _write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    _write(project, "pytest.ini", "[pytest]\n")
    _write(project, "conftest.py", HOOK_CONFTEST)
    _write(project, "st/test_cases.py", SUITE)
    return project


def test_a_conftest_defining_the_hook_is_found_above_in_and_below_a_path(tmp_path: Path) -> None:
    project = _project(tmp_path)
    assert sized_by_hook(project, walk_skip=NO_SKIP)
    assert sized_by_hook(project / "st", walk_skip=NO_SKIP)
    assert sized_by_hook(project / "st" / "test_cases.py", walk_skip=NO_SKIP)
    # Below a folder given: a subproject's conftest.
    _write(tmp_path, "outer/pytest.ini", "[pytest]\n")
    _write(tmp_path, "outer/sub/conftest.py", HOOK_CONFTEST)
    assert sized_by_hook(tmp_path / "outer", walk_skip=NO_SKIP)


def test_a_conftest_without_the_hook_or_above_the_project_does_not_count(tmp_path: Path) -> None:
    _write(tmp_path, "conftest.py", HOOK_CONFTEST)  # above the project's ini: not its own
    _write(tmp_path, "plain/pytest.ini", "[pytest]\n")
    _write(tmp_path, "plain/conftest.py", "def pytest_simpler_runtime(item):\n    return 'x'\n")
    _write(tmp_path, "plain/test_a.py", "def test_a():\n    pass\n")
    assert not sized_by_hook(tmp_path / "plain", walk_skip=NO_SKIP)
    assert not sized_by_hook(tmp_path / "plain" / "test_a.py", walk_skip=NO_SKIP)


def test_a_suite_sized_by_its_hook_is_collected_through_pytest(tmp_path: Path) -> None:
    project = _project(tmp_path)
    loaded = collect([str(project / "st")], lenient=False)
    assert loaded.warnings == []
    assert sorted((r.filename, r.suite, r.est_time) for r in loaded.registrations) == [
        ("st/test_cases.py", "1-npu-scene", DEFAULT_EST_S),  # test_case[single]
        ("st/test_cases.py", "1-npu-scene", DEFAULT_EST_S),  # test_l2: an L2 test is 1 device
        ("st/test_cases.py", "2-npu-scene", 30.0),  # the marker, as ast would read it
        ("st/test_cases.py", "4-npu-scene", DEFAULT_EST_S),  # test_case[quad], from CASES
    ]


def test_a_bad_hook_answer_is_one_line_or_skipped_when_lenient(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path)
    monkeypatch.setenv("CASES_BAD", "1")
    with pytest.raises(InputError) as caught:
        collect([str(project)], lenient=False)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"--collect: {project}: st/test_cases.py::test_case[single]: ")
    assert "pytest_simpler_device_count returned 0 (int)" in message
    loaded = collect([str(project)], lenient=True)
    assert loaded.registrations == []
    assert len(loaded.warnings) == 1 and loaded.warnings[0].endswith("(skipped)")
