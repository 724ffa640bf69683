"""--collect reads device_count markers from test files without importing them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from simpler.capacity.collect import DEFAULT_EST_S, collect
from simpler.capacity.model import InputError, Registration

SCENE_TESTS = """
import pytest
from pytest import mark

import a_module_that_does_not_exist  # proves the file is parsed, never imported


def test_default_is_one_device():
    pass


@pytest.mark.device_count(4, est=12.5)
def test_four_devices():
    pass


@pytest.mark.slow
@mark.device_count(n=2)
async def test_two_devices_async():
    pass


def helper_not_a_test():
    pass


@pytest.mark.device_count(8, est=3)
class TestEightByClass:
    def test_inherits_the_class_marker(self):
        pass

    @pytest.mark.device_count(16)
    def test_own_marker_is_closer(self):
        pass

    def helper(self):
        pass


class TestMarkedInBody:
    pytestmark = [pytest.mark.slow, pytest.mark.device_count(2, est=7)]

    def test_body_marker(self):
        pass


class NotATestClass:
    def test_ignored(self):
        pass


class TestWithInit:
    def __init__(self):
        pass

    def test_not_collected_by_pytest(self):
        pass
"""


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return path


def suites_by_test(registrations: list[Registration]) -> list[tuple[str, float]]:
    return [(registration.suite, registration.est_time) for registration in registrations]


def test_markers_on_functions_and_classes_give_each_test_its_devices(tmp_path: Path) -> None:
    path = write(tmp_path, "test_scene.py", SCENE_TESTS)
    loaded = collect([str(path)], lenient=False)
    assert suites_by_test(loaded.registrations) == [
        ("1-npu-scene", DEFAULT_EST_S),
        ("4-npu-scene", 12.5),
        ("2-npu-scene", DEFAULT_EST_S),
        ("8-npu-scene", 3.0),
        ("16-npu-scene", DEFAULT_EST_S),
        ("2-npu-scene", 7.0),
    ]
    assert loaded.warnings == []


def test_collected_tests_are_enabled_per_commit_sim_registrations(tmp_path: Path) -> None:
    path = write(tmp_path, "test_one.py", "def test_one():\n    pass\n")
    assert collect([str(path)], lenient=False).registrations == [
        Registration(str(path), "sim", "1-npu-scene", DEFAULT_EST_S, nightly=False, disabled=None)
    ]


def test_a_module_pytestmark_applies_to_every_test_without_a_closer_one(tmp_path: Path) -> None:
    source = """
        import pytest
        pytestmark = pytest.mark.device_count(2)

        def test_module_marker():
            pass

        @pytest.mark.device_count(4)
        def test_own_marker():
            pass
    """
    loaded = collect([str(write(tmp_path, "test_mod.py", source))], lenient=False)
    assert [registration.suite for registration in loaded.registrations] == [
        "2-npu-scene",
        "4-npu-scene",
    ]


def test_a_directory_is_searched_for_pytest_test_files(tmp_path: Path) -> None:
    write(tmp_path, "st/test_a.py", "def test_a():\n    pass\n")
    write(tmp_path, "st/deep/b_test.py", "def test_b():\n    pass\n")
    write(tmp_path, "st/helpers.py", "def test_not_in_a_test_file():\n    pass\n")
    write(tmp_path, "st/.venv/test_vendored.py", "def test_hidden():\n    pass\n")
    loaded = collect([str(tmp_path / "st")], lenient=False)
    assert sorted(Path(r.filename).name for r in loaded.registrations) == ["b_test.py", "test_a.py"]


def test_a_count_only_an_import_could_evaluate_is_unsized_and_said(tmp_path: Path) -> None:
    source = """
        import pytest
        N = 4

        @pytest.mark.device_count(N)
        def test_dynamic():
            pass
    """
    path = write(tmp_path, "test_dyn.py", source)
    loaded = collect([str(path)], lenient=False)
    assert [registration.suite for registration in loaded.registrations] == ["unknown-npu-scene"]
    assert loaded.warnings == [
        f"--collect: {path}:6: test_dynamic: device_count(...) is not a literal integer >= 1; "
        "the test is reported as unsized"
    ]


def test_a_file_that_does_not_parse_is_an_error_or_skipped_when_lenient(tmp_path: Path) -> None:
    path = write(tmp_path, "test_broken.py", "def test_x(:\n")
    with pytest.raises(InputError, match=rf"--collect: cannot parse {path}: line 1: "):
        collect([str(path)], lenient=False)
    loaded = collect([str(path)], lenient=True)
    assert loaded.registrations == []
    assert len(loaded.warnings) == 1
    assert loaded.warnings[0].endswith("(skipped)")


def test_a_missing_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file or directory"):
        collect([str(tmp_path / "tests" / "st")], lenient=False)
