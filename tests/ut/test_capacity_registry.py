"""Reading a registry: a JSON list or JSON Lines, every bad entry named by file and entry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from simpler.capacity.model import InputError, Registration
from simpler.capacity.registry import load_registry


def entry(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "filename": "test/srt/test_a.py",
        "backend": "cuda",
        "suite": "stage-a-1-gpu",
        "est_time": 30,
        "nightly": False,
        "disabled": None,
    }
    return {**base, **overrides}


def write_list(tmp_path: Path, entries: list[Any]) -> Path:
    path = tmp_path / "registry.json"
    path.write_text(json.dumps(entries, indent=2))
    return path


def write_lines(tmp_path: Path, entries: list[Any]) -> Path:
    path = tmp_path / "registry.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in entries))
    return path


def load_error(path: Path) -> str:
    with pytest.raises(InputError) as raised:
        load_registry(path, lenient=False)
    return str(raised.value)


def test_a_json_list_gives_one_registration_per_entry(tmp_path: Path) -> None:
    path = write_list(tmp_path, [entry(), entry(filename="b.py", disabled="flaky", nightly=True)])
    loaded = load_registry(path, lenient=False)
    assert loaded.registrations == [
        Registration("test/srt/test_a.py", "cuda", "stage-a-1-gpu", 30.0),
        Registration("b.py", "cuda", "stage-a-1-gpu", 30.0, nightly=True, disabled="flaky"),
    ]
    assert loaded.warnings == []


def test_json_lines_read_the_same_and_blank_lines_are_ignored(tmp_path: Path) -> None:
    path = write_lines(tmp_path, [entry(), entry(est_time=1.5)])
    path.write_text(path.read_text() + "\n\n")
    loaded = load_registry(path, lenient=False)
    assert [registration.est_time for registration in loaded.registrations] == [30.0, 1.5]


def test_nightly_and_disabled_may_be_left_out_and_extra_fields_are_ignored(tmp_path: Path) -> None:
    bare = {"filename": "a.py", "backend": "npu", "suite": "16-npu", "est_time": 5, "owner": "x"}
    loaded = load_registry(write_list(tmp_path, [bare]), lenient=False)
    assert loaded.registrations == [Registration("a.py", "npu", "16-npu", 5.0)]


@pytest.mark.parametrize("text", ["", "  \n", "[]"])
def test_an_empty_registry_has_no_registrations(tmp_path: Path, text: str) -> None:
    path = tmp_path / "empty.json"
    path.write_text(text)
    assert load_registry(path, lenient=False).registrations == []


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        ({"est_time": None}, "est_time must be a number of seconds, got null"),
        ({"est_time": "12s"}, 'est_time must be a number of seconds, got string "12s"'),
        ({"est_time": True}, "est_time must be a number of seconds, got boolean true"),
        ({"est_time": -1}, "est_time must be a finite number >= 0, got -1"),
        ({"est_time": 10**400}, f"est_time is too large to be seconds, got number 1{'0' * 36}..."),
        ({"suite": 7}, "suite must be a string (empty when there is none), got number 7"),
        ({"backend": ""}, 'backend must be a non-empty string, got string ""'),
        ({"nightly": "yes"}, 'nightly must be true or false, got string "yes"'),
        ({"disabled": False}, "disabled must be null or a reason string, got boolean false"),
    ],
)
def test_a_field_of_the_wrong_type_names_the_file_the_entry_and_the_field(
    tmp_path: Path, bad: dict[str, Any], problem: str
) -> None:
    path = write_list(tmp_path, [entry(), entry(filename="test_b.py", **bad)])
    assert load_error(path) == f"{path}: entry [1] (filename 'test_b.py'): {problem}"


def test_a_missing_est_time_is_named(tmp_path: Path) -> None:
    missing = entry(filename="test_c.py")
    del missing["est_time"]
    path = write_list(tmp_path, [missing])
    assert load_error(path) == f"{path}: entry [0] (filename 'test_c.py'): est_time is missing"


def test_a_json_lines_entry_is_named_by_its_line_too(tmp_path: Path) -> None:
    path = write_lines(tmp_path, [entry(), entry(filename="test_d.py", est_time="soon")])
    assert load_error(path).startswith(f"{path}: entry [1] at line 2 (filename 'test_d.py'): ")


def test_every_problem_of_an_entry_is_on_its_one_line(tmp_path: Path) -> None:
    path = write_list(tmp_path, [{"filename": "test_e.py", "backend": 3}])
    assert load_error(path) == (
        f"{path}: entry [0] (filename 'test_e.py'): backend must be a non-empty string, "
        "got number 3; est_time is missing"
    )


def test_strict_mode_names_the_first_bad_entry_and_counts_the_rest(tmp_path: Path) -> None:
    path = write_list(tmp_path, [entry(est_time="x"), entry(), "not an object", entry(suite=[])])
    message = load_error(path)
    assert message.startswith(f"{path}: entry [0] (filename 'test/srt/test_a.py'): est_time")
    assert message.endswith("[and 2 more bad entries; --lenient skips them]")
    assert "\n" not in message


def test_lenient_mode_warns_once_per_bad_entry_and_keeps_the_good_ones(tmp_path: Path) -> None:
    path = write_lines(tmp_path, [entry(est_time="x"), entry(filename="good.py"), [1, 2]])
    path.write_text(path.read_text() + "{not json\n")
    loaded = load_registry(path, lenient=True)
    assert [registration.filename for registration in loaded.registrations] == ["good.py"]
    assert loaded.warnings == [
        f"{path}: entry [0] at line 1 (filename 'test/srt/test_a.py'): est_time must be a "
        'number of seconds, got string "x" (skipped)',
        f"{path}: entry [2] at line 3: must be an object, got array (skipped)",
        f"{path}: entry [3] at line 4: not valid JSON: Expecting property name enclosed in "
        "double quotes (skipped)",
    ]


@pytest.mark.parametrize(
    ("text", "got"),
    [
        ("42", "got one JSON number"),
        ('"registrations"', "got one JSON string"),
        ("null", "got one JSON null"),
        ("registrations: []", "got text that is not JSON"),
        ('{\n  "registrations": []\n}', "got one JSON object"),
    ],
)
def test_an_unknown_top_level_shape_is_an_error_even_when_lenient(
    tmp_path: Path, text: str, got: str
) -> None:
    path = tmp_path / "registry.json"
    path.write_text(text)
    with pytest.raises(InputError, match="unknown top-level shape") as raised:
        load_registry(path, lenient=True)
    assert str(raised.value) == (
        f"{path}: unknown top-level shape: expected a JSON list of registrations or JSON Lines "
        f"of objects, {got}"
    )


def test_a_broken_json_list_says_where_it_breaks(tmp_path: Path) -> None:
    path = tmp_path / "registry.json"
    path.write_text('[\n  {"filename": "a.py",\n')
    assert load_error(path).startswith(f"{path}: not valid JSON at line 3 column 1: ")


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "absent.json"
    assert load_error(path) == f"cannot read registry {path}: No such file or directory"


def test_a_file_that_is_not_text_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "binary.json"
    path.write_bytes(b"[\xff\xfe]")
    assert load_error(path).startswith(f"cannot read registry {path}: 'utf-8' codec")


@pytest.mark.parametrize("suite", ["", "   ", None, "missing"])
def test_a_registration_without_a_suite_is_kept_unsized_and_named_once(
    tmp_path: Path, suite: str | None
) -> None:
    # sglang's disabled NPU registrations carry suite="": the registry is real, not wrong.
    without = entry(filename="test_npu.py", backend="npu", disabled="not ready on a3")
    if suite == "missing":
        del without["suite"]
    else:
        without["suite"] = suite
    path = write_list(tmp_path, [entry(), without])
    loaded = load_registry(path, lenient=False)
    assert [(r.suite, r.disabled) for r in loaded.registrations] == [
        ("stage-a-1-gpu", None),
        ("", "not ready on a3"),
    ]
    assert loaded.warnings == [
        f"{path}: 1 registration has no suite; counted as unsized: "
        "entry [1] (filename 'test_npu.py')"
    ]


def test_the_no_suite_warning_names_five_then_counts_the_rest(tmp_path: Path) -> None:
    path = write_lines(tmp_path, [entry(filename=f"t{n}.py", suite="") for n in range(7)])
    (warning,) = load_registry(path, lenient=False).warnings
    assert warning.startswith(f"{path}: 7 registrations have no suite; counted as unsized: ")
    assert warning.endswith("entry [4] at line 5 (filename 't4.py'), and 2 more")
