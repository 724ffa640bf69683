"""The durations file: it round-trips, smooths, merges under a lock, survives damage and
reads the older shape; estimates prefer a measurement over the job's own ``est_s``."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from simpler.scheduler.durations import (
    DEFAULT_EST_S,
    KEPT_SAMPLES,
    estimator,
    load_durations,
    load_measurements,
    record_durations,
    record_results,
)
from simpler.scheduler.jobs import Job, JobResult


def test_recorded_durations_read_back(tmp_path: Path) -> None:
    path = tmp_path / ".simpler" / "durations.json"  # the folder is made on first write
    record_durations(path, [("tests/st/test_a.py::test_x", 12.5), ("label-b", 3)])
    assert load_durations(path) == {"tests/st/test_a.py::test_x": 12.5, "label-b": 3.0}


def test_a_later_run_updates_its_keys_and_keeps_the_others(tmp_path: Path) -> None:
    path = tmp_path / "durations.json"
    record_durations(path, [("a", 1.0), ("b", 2.0)])
    record_durations(path, [("b", 20.0), ("c", 30.0)])
    durations = load_durations(path)
    assert (durations["a"], durations["c"]) == (1.0, 30.0)
    assert durations["b"] == 11.0  # the median of its two samples, not the last one


def test_the_estimate_is_the_median_of_the_last_five_runs(tmp_path: Path) -> None:
    path = tmp_path / "durations.json"
    for seconds in (100.0, 10.0, 11.0, 95.0, 12.0, 13.0):
        record_durations(path, [("t", seconds)])
    measured = load_measurements(path)["t"]
    assert measured.samples == (10.0, 11.0, 95.0, 12.0, 13.0)  # the first fell out
    assert measured.count == 6
    assert measured.seconds == 12.0  # one slow run (95 s) does not move it
    assert len(measured.samples) == KEPT_SAMPLES


def test_a_lasting_change_takes_over_after_three_runs(tmp_path: Path) -> None:
    path = tmp_path / "durations.json"
    for seconds in (10.0, 10.0, 40.0, 40.0, 40.0):
        record_durations(path, [("t", seconds)])
    assert load_durations(path)["t"] == 40.0


def test_the_file_of_the_older_shape_still_reads_and_is_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "durations.json"
    path.write_text(json.dumps({"old": 7.5, "other": 3}))
    assert load_durations(path) == {"old": 7.5, "other": 3.0}
    record_durations(path, [("old", 8.5)])
    assert load_measurements(path)["old"].samples == (7.5, 8.5)
    assert load_durations(path)["other"] == 3.0


def test_a_timed_out_run_is_a_lower_bound_not_a_sample(tmp_path: Path) -> None:
    path = tmp_path / "durations.json"
    timed_out = JobResult("slow", None, "SIGKILL", [0], 60.0, timed_out=True)
    failed = JobResult("broken", 1, None, [0], 0.5)
    passed = JobResult("t::x", 0, None, [1], 4.0, nodeid="t::x")
    record_results(path, [timed_out, failed, passed])
    measured = load_measurements(path)
    assert "broken" not in measured  # a failure ends anywhere: no evidence of a pass
    assert measured["t::x"].samples == (4.0,)  # keyed by node id
    assert measured["slow"].samples == () and measured["slow"].count == 0
    estimate = estimator(measured)
    assert estimate(Job("slow", 1, ("true",), est_s=5.0)) == 60.0  # at least what it ran
    assert estimate(Job("slow", 1, ("true",), est_s=90.0)) == 90.0
    assert estimate.source(Job("slow", 1, ("true",), est_s=5.0)) == "timed out (at least 60s)"
    record_results(path, [JobResult("slow", 0, None, [0], 30.0)])  # then it passed
    assert load_durations(path)["slow"] == 30.0


def _record_many(path: str, writer: int) -> None:
    for round_ in range(20):
        record_durations(Path(path), [(f"w{writer}-{round_}", 1.0), ("shared", float(writer))])


def test_concurrent_writers_lose_no_update(tmp_path: Path) -> None:
    path = tmp_path / "durations.json"
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_record_many, args=(str(path), n)) for n in range(4)]
    for process in writers:
        process.start()
    for process in writers:
        process.join(60)
    assert [process.exitcode for process in writers] == [0, 0, 0, 0]
    measured = load_measurements(path)
    assert {f"w{n}-{r}" for n in range(4) for r in range(20)} <= set(measured)
    assert measured["shared"].count == 80  # every writer's every sample was counted


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
    good = {"seconds": 2.0, "samples": [2.0], "count": 3}
    bad_samples = {"seconds": 2.0, "samples": ["2"], "count": 1}
    bad_count = {"seconds": 2.0, "samples": [2.0, 3.0], "count": 1}
    path.write_text(
        json.dumps(
            {
                "ok": 4,
                "text": "5",
                "negative": -1,
                "flag": True,
                "none": None,
                "new": good,
                "bad-samples": bad_samples,
                "bad-count": bad_count,
                "empty": {"samples": [], "count": 0},
            }
        )
    )
    assert load_durations(path) == {"ok": 4.0, "new": 2.0}


def test_a_damaged_file_is_replaced_on_the_next_record(tmp_path: Path) -> None:
    path = tmp_path / "durations.json"
    path.write_text("{torn")
    record_durations(path, [("a", 1.0)])
    assert load_durations(path) == {"a": 1.0}


def test_the_estimate_prefers_a_measurement_then_the_job_then_the_default() -> None:
    # est_s is a hand estimate that drifts: it only serves until the job has run once.
    durations = {"tests/st/test_a.py::test_x": 40.0, "by-label": 50.0}
    estimate = estimator(durations, default=7.0)
    by_node = Job("by-label", 1, ("true",), est_s=5.0, nodeid="tests/st/test_a.py::test_x")
    labelled = Job("by-label", 1, ("true",), est_s=5.0)
    own = Job("new", 1, ("true",), est_s=5.0)
    unknown = Job("new", 1, ("true",))
    assert [estimate(j) for j in (by_node, labelled, own, unknown)] == [40.0, 50.0, 5.0, 7.0]
    assert [estimate.source(j) for j in (by_node, own, unknown)] == [
        "measured (1 sample)",
        "est_s",
        "default",
    ]


def test_a_node_id_never_recorded_takes_the_default_not_a_same_named_label() -> None:
    estimate = estimator({"shared": 50.0})
    assert estimate(Job("shared", 1, ("true",), nodeid="tests/new.py::t")) == DEFAULT_EST_S


def test_an_estimate_of_zero_is_the_job_own_and_not_missing() -> None:
    assert estimator({})(Job("zero", 1, ("true",), est_s=0.0)) == 0.0
