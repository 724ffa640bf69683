"""The durations file: it round-trips, merges, survives damage; estimates take the right source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simpler.scheduler.durations import (
    DEFAULT_EST_S,
    estimator,
    load_durations,
    record_durations,
)
from simpler.scheduler.jobs import Job


def test_recorded_durations_read_back(tmp_path: Path) -> None:
    path = tmp_path / ".simpler" / "durations.json"  # the folder is made on first write
    record_durations(path, [("tests/st/test_a.py::test_x", 12.5), ("label-b", 3)])
    assert load_durations(path) == {"tests/st/test_a.py::test_x": 12.5, "label-b": 3.0}


def test_a_later_run_updates_its_keys_and_keeps_the_others(tmp_path: Path) -> None:
    path = tmp_path / "durations.json"
    record_durations(path, [("a", 1.0), ("b", 2.0)])
    record_durations(path, [("b", 20.0), ("c", 30.0)])
    assert load_durations(path) == {"a": 1.0, "b": 20.0, "c": 30.0}


def test_the_write_leaves_no_temporary_file_behind(tmp_path: Path) -> None:
    path = tmp_path / "durations.json"
    record_durations(path, [("a", 1.0)])
    assert [p.name for p in tmp_path.iterdir()] == ["durations.json"]


def test_a_missing_file_reads_as_no_durations(tmp_path: Path) -> None:
    assert load_durations(tmp_path / "absent.json") == {}


@pytest.mark.parametrize(
    "content",
    ['{"a": 1.0', "not json at all", "[1, 2, 3]", '"a string"', "null", b"\xff\xfe\x00"],
    ids=["torn", "garbage", "a-list", "a-string", "null", "not-utf8"],
)
def test_a_damaged_file_reads_as_no_durations(tmp_path: Path, content: str | bytes) -> None:
    path = tmp_path / "durations.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    assert load_durations(path) == {}


def test_bad_entries_are_dropped_one_by_one(tmp_path: Path) -> None:
    path = tmp_path / "durations.json"
    path.write_text(json.dumps({"ok": 4, "text": "5", "negative": -1, "flag": True, "none": None}))
    assert load_durations(path) == {"ok": 4.0}


def test_a_damaged_file_is_replaced_on_the_next_record(tmp_path: Path) -> None:
    path = tmp_path / "durations.json"
    path.write_text("{torn")
    record_durations(path, [("a", 1.0)])
    assert load_durations(path) == {"a": 1.0}


def test_the_estimate_prefers_the_job_then_the_node_id_then_the_label_then_the_default() -> None:
    durations = {"tests/st/test_a.py::test_x": 40.0, "by-label": 50.0}
    estimate = estimator(durations, default=7.0)
    own = Job("by-label", 1, ("true",), est_s=5.0, nodeid="tests/st/test_a.py::test_x")
    recorded = Job("by-label", 1, ("true",), nodeid="tests/st/test_a.py::test_x")
    labelled = Job("by-label", 1, ("true",))
    unknown = Job("new", 1, ("true",))
    assert [estimate(j) for j in (own, recorded, labelled, unknown)] == [5.0, 40.0, 50.0, 7.0]


def test_a_node_id_never_recorded_takes_the_default_not_a_same_named_label() -> None:
    estimate = estimator({"shared": 50.0})
    assert estimate(Job("shared", 1, ("true",), nodeid="tests/new.py::t")) == DEFAULT_EST_S


def test_an_estimate_of_zero_is_the_job_own_and_not_missing() -> None:
    assert estimator({"zero": 50.0})(Job("zero", 1, ("true",), est_s=0.0)) == 0.0
