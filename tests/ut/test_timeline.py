"""The timeline picture: a lane per device, a bar per class or child, marks where cards stalled."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from simpler.reporting.records import Record, from_dict
from simpler.reporting.timeline import OUTCOME_COLOURS, TimelineUnwritable, render_timeline
from simpler.reporting.timeline_layout import CHAR_EM

NS = "{http://www.w3.org/2000/svg}"
T0 = 1_700_000_000.0
RUN = "run-a"


def record(kind: str, at: float, phase: str = "l2", run: str = RUN, **fields: Any) -> Record:
    return from_dict(
        {"schema": 1, "run": run, "ts": T0 + at, "phase": phase, "type": kind, **fields}
    )


def result(nodeid: str, outcome: str, at: float, device: int | None, **fields: Any) -> Record:
    fields = {"attempt": 1, "duration_s": 0.5, "rc": None, "where": None, **fields}
    phase = fields.pop("phase", "l2")
    return record("test", at, phase, nodeid=nodeid, outcome=outcome, device=device, **fields)


def lifecycle(dest: str, at: float, device: int, **fields: Any) -> Record:
    worker = f"a5sim/host_build_graph/dev{device}/gw{device}"
    fields = {"source": "healthy", "trigger": "device_error", "rc": None, "where": None, **fields}
    return record("lifecycle", at, worker=worker, device=device, dest=dest, **fields)


def child(
    label: str, at: float, devices: list[int], returncode: int | None = 0, **fields: Any
) -> Record:
    fields = {
        "signal": None,
        "timed_out": False,
        "duration_s": 1.0,
        "reached_summary": True,
        **fields,
    }
    return record(
        "child",
        at,
        "resource",
        label=label,
        nodeid=label,
        returncode=returncode,
        devices=devices,
        **fields,
    )


def phase(name: str, event: str, at: float, run: str = RUN) -> Record:
    return record("phase", at, name, run, event=event)


def a_run(run: str = RUN) -> list[Record]:
    """Two cards: dev 1 hangs in TestHang (poisoned, reset, rebuilt); a child crashes on both."""
    records = [
        phase("l2", "start", 0.0),
        result("f.py::TestA::test_1", "passed", 1.0, 0),
        result("f.py::TestA::test_2", "passed", 1.6, 0),
        result("f.py::TestB::test_1", "failed", 2.2, 0, rc=507046, where="aclrtSynchronize"),
        result("g.py::TestC::test_1", "passed", 1.0, 1),
        lifecycle("poisoned", 2.0, 1),
        lifecycle("force_reset", 2.01, 1, source="poisoned", trigger="start_force_reset"),
        lifecycle("rebuilt", 2.02, 1, source="force_reset", trigger="rebuild_ok"),
        result("g.py::TestHang::test_spin", "failed", 2.03, 1, rc=507046, where="aclrtSync"),
        result("g.py::TestAfter::test_1", "passed", 3.0, 1),
        phase("l2", "end", 3.1),
        phase("resource", "start", 3.2),
        child("r.py::test_crash", 4.5, [0, 1], None, signal="SIGSEGV", reached_summary=False),
        child("r.py::test_fine", 6.0, [0]),
        child("r.py::test_wrong", 6.0, [1], 1),
        record("quarantine", 6.1, "resource", devices=[1], reason="could not be reset"),
        phase("resource", "end", 6.2),
        phase("retry", "start", 6.3),
        result("g.py::TestAfter::test_2", "recovered", 7.0, 0, phase="retry", attempt=2),
        result("g.py::TestHang::test_spin", "flaky", 8.0, 0, phase="retry", attempt=2),
        phase("retry", "end", 8.5),
    ]
    return [from_dict({**r.raw, "run": run}) for r in records]


def drawn(tmp_path: Path, records: list[Record], name: str = "timeline.svg") -> ET.Element:
    path = tmp_path / name
    render_timeline(records, path)
    return ET.parse(path).getroot()


def groups(svg: ET.Element, css_class: str, **data: str) -> list[ET.Element]:
    found = svg.iter(f"{NS}g")
    return [
        g
        for g in found
        if g.get("class") == css_class and all(g.get(f"data-{k}") == v for k, v in data.items())
    ]


def title(group: ET.Element) -> str:
    element = group.find(f"{NS}title")
    assert element is not None and element.text
    return element.text


def bar_named(svg: ET.Element, name: str, device: int) -> ET.Element:
    (bar,) = [b for b in groups(svg, "bar", device=str(device)) if title(b).startswith(name)]
    return bar


def rect_of(group: ET.Element) -> ET.Element:
    rect = group.find(f"{NS}rect")
    assert rect is not None
    return rect


def fill(group: ET.Element) -> str | None:
    return rect_of(group).get("fill")


def span_of(group: ET.Element) -> tuple[float, float]:
    rect = rect_of(group)
    x = float(rect.get("x", 0))
    return x, x + float(rect.get("width", 0))


def test_one_lane_per_device_labelled_by_device(tmp_path: Path) -> None:
    svg = drawn(tmp_path, a_run())
    lanes = groups(svg, "lane")
    assert [(g.get("data-run"), g.get("data-device")) for g in lanes] == [(RUN, "0"), (RUN, "1")]
    assert [g.findtext(f"{NS}text") for g in lanes] == ["dev 0", "dev 1"]


def test_a_bar_per_class_on_each_device(tmp_path: Path) -> None:
    svg = drawn(tmp_path, a_run())
    classes = {
        (g.get("data-device"), title(g).splitlines()[0]) for g in groups(svg, "bar", kind="class")
    }
    assert classes == {
        ("0", "f.py::TestA"),
        ("0", "f.py::TestB"),
        ("1", "g.py::TestC"),
        ("1", "g.py::TestHang"),
        ("1", "g.py::TestAfter"),
        ("0", "g.py::TestAfter (attempt 2)"),
        ("0", "g.py::TestHang (attempt 2)"),
    }
    assert "2 passed" in title(bar_named(svg, "f.py::TestA", 0))
    assert "rc 507046 at aclrtSynchronize" in title(bar_named(svg, "f.py::TestB", 0))


@pytest.mark.parametrize(
    ("other", "shown"),
    [
        ("failed", "failed"),
        ("error", "error"),
        ("poison_skipped", "poison_skipped"),
        ("flaky", "flaky"),
        ("recovered", "recovered"),
        ("skipped", "passed"),  # a class that ran is not grey for one skip
        ("no-such-outcome", "error"),  # an unreadable verdict must not look green
    ],
)
def test_a_class_bar_shows_its_worst_outcome(tmp_path: Path, other: str, shown: str) -> None:
    records = [
        result("f.py::TestA::test_1", "passed", 1.0, 0),
        result("f.py::TestA::test_2", other, 2.0, 0),
    ]
    (bar,) = groups(drawn(tmp_path, records), "bar")
    assert bar.get("data-outcome") == shown
    assert fill(bar) == OUTCOME_COLOURS[shown]


def test_a_child_is_drawn_on_each_of_its_devices(tmp_path: Path) -> None:
    svg = drawn(tmp_path, a_run())
    crashed = [b for b in groups(svg, "bar", kind="child") if "test_crash" in title(b)]
    assert sorted(str(b.get("data-device")) for b in crashed) == ["0", "1"]
    for bar in crashed:
        assert bar.get("data-outcome") == "child_killed"
        assert [r.get("fill") for r in bar.iter(f"{NS}rect")][1] == "url(#hatch)"
        assert "killed by SIGSEGV" in title(bar) and "devices 0,1" in title(bar)
    assert fill(bar_named(svg, "child r.py::test_fine", 0)) == OUTCOME_COLOURS["child_ok"]
    assert fill(bar_named(svg, "child r.py::test_wrong", 1)) == OUTCOME_COLOURS["child_failed"]


def test_lifecycle_events_are_marked_on_their_device_with_tooltips(tmp_path: Path) -> None:
    records = [*a_run(), lifecycle("skipped", 3.05, 0, rc=507046, where="aclrtResetDeviceForce")]
    svg = drawn(tmp_path, records)
    marks = {(g.get("data-device"), g.get("data-kind")): title(g) for g in groups(svg, "marker")}
    assert set(marks) == {
        ("1", "poisoned"),
        ("1", "force_reset"),
        ("1", "rebuilt"),
        ("0", "skipped"),
    }
    assert marks[("1", "poisoned")].startswith("dev 1: poisoned at 2.00 s")
    assert "trigger: rebuild_ok" in marks[("1", "rebuilt")]
    assert "rc 507046 at aclrtResetDeviceForce" in marks[("0", "skipped")]


def test_markers_of_one_moment_sit_side_by_side_in_order(tmp_path: Path) -> None:
    svg = drawn(tmp_path, a_run())
    centres = []
    for kind in ("poisoned", "force_reset", "rebuilt"):
        (mark,) = groups(svg, "marker", device="1", kind=kind)
        centres.append(marker_centre(mark))
    assert centres == sorted(centres) and centres[2] - centres[0] >= 15


def marker_centre(mark: ET.Element) -> float:
    polygon, path = mark.find(f"{NS}polygon"), mark.find(f"{NS}path")
    if polygon is not None:  # its first point is straight above the centre
        return float(polygon.get("points", "").split(",")[0])
    assert path is not None  # the cross starts 4 px left of its centre
    return float(path.get("d", "").removeprefix("M").split(",")[0]) + 4


def test_a_reset_retried_three_times_is_one_marker(tmp_path: Path) -> None:
    resets = [lifecycle("force_reset", 2.0 + i / 1000, 1, source="force_reset") for i in range(3)]
    svg = drawn(tmp_path, [result("g.py::TestHang::test_spin", "failed", 2.1, 1), *resets])
    (mark,) = groups(svg, "marker", kind="force_reset")
    assert "force reset (3 times)" in title(mark)


def test_a_retired_device_is_a_band_to_the_end_of_the_run(tmp_path: Path) -> None:
    svg = drawn(tmp_path, a_run())
    (band,) = groups(svg, "band")
    assert band.get("data-device") == "1"
    assert "retired from 6.10 s to the end of the run: could not be reset" in title(band)
    assert fill(band) == "url(#retired)"
    start, end = span_of(band)
    retry_end = [line for line in svg.iter(f"{NS}line") if line.get("class") == "phase-end"][-1]
    assert end == pytest.approx(float(retry_end.get("x1", 0)), abs=0.2)  # the run's last record
    assert span_of(bar_named(svg, "child r.py::test_wrong", 1))[1] <= start


def test_phase_boundaries_are_faint_lines_named_once(tmp_path: Path) -> None:
    svg = drawn(tmp_path, a_run())
    lines = [line.get("class") for line in svg.iter(f"{NS}line") if line.get("class")]
    assert lines.count("phase-start") == 3 and lines.count("phase-end") == 3
    phases = next(g for g in svg.iter(f"{NS}g") if g.get("class") == "phases")
    assert [t.text for t in phases.iter(f"{NS}text")] == ["l2", "resource", "retry"]


def test_merged_runs_get_lanes_of_their_own_each_starting_at_zero(tmp_path: Path) -> None:
    later = [from_dict({**r.raw, "ts": r.raw["ts"] + 5000}) for r in a_run("shard-2")]
    svg = drawn(tmp_path, [*later, *a_run("shard-1")])
    lanes = [g.findtext(f"{NS}text") for g in groups(svg, "lane")]
    assert lanes == ["shard-1 · dev 0", "shard-1 · dev 1", "shard-2 · dev 0", "shard-2 · dev 1"]
    first = [
        span_of(next(b for b in groups(svg, "bar", run=run) if "TestA" in title(b)))
        for run in ("shard-1", "shard-2")
    ]
    assert first[0] == first[1]  # each run on the shared axis from its own 0


def test_bars_that_overlap_on_one_device_stack_in_rows(tmp_path: Path) -> None:
    records = [child("r.py::test_one", 2.0, [0]), child("r.py::test_two", 2.5, [0])]
    svg = drawn(tmp_path, records)
    ys = sorted(float(rect_of(bar).get("y", 0)) for bar in groups(svg, "bar"))
    assert ys[1] - ys[0] == 28
    (lane,) = groups(svg, "lane")
    assert rect_of(lane).get("height") == "56"


def test_labels_are_drawn_only_where_they_fit(tmp_path: Path) -> None:
    records = [
        result("f.py::TestLongRunningClassName::test", "passed", 30.0, 0, duration_s=29.0),
        result("f.py::TestInstant::test", "passed", 30.5, 0, duration_s=0.001),
    ]
    svg = drawn(tmp_path, records)
    long_bar, instant = bar_named(svg, "f.py::TestLong", 0), bar_named(svg, "f.py::TestInstant", 0)
    assert long_bar.findtext(f"{NS}text") == "TestLongRunningClassName"
    assert instant.find(f"{NS}text") is None
    for bar in groups(svg, "bar"):
        text = bar.findtext(f"{NS}text")
        if text:
            start, end = span_of(bar)
            assert len(text) * 10 * CHAR_EM <= end - start


def test_the_html_page_embeds_the_same_svg(tmp_path: Path) -> None:
    render_timeline(a_run(), tmp_path / "t.html")
    page = (tmp_path / "t.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    svg = ET.fromstring(page[page.index("<svg") : page.rindex("</svg>") + len("</svg>")])
    assert len(groups(svg, "lane")) == 2 and groups(svg, "bar")


@pytest.mark.parametrize("records", [[], [phase("l2", "start", 0.0), phase("l2", "end", 1.0)]])
def test_no_test_or_child_record_still_renders_a_picture(
    tmp_path: Path, records: list[Record]
) -> None:
    svg = drawn(tmp_path, records)
    assert [t.text for t in svg.iter(f"{NS}text")] == ["no test or child records"]


def test_text_from_test_output_cannot_break_the_file(tmp_path: Path) -> None:
    nodeid = "f.py::Test<&>\x1b[31m::test_x"
    records = [result(nodeid, "failed", 1.0, 0, rc=1, where="a\x00b & <c>")]
    svg = drawn(tmp_path, records)
    assert "Test<&>?[31m" in title(groups(svg, "bar")[0])


def test_records_without_time_or_device_are_left_out(tmp_path: Path) -> None:
    records = [
        from_dict({**result("f.py::TestA::test", "passed", 1.0, 0).raw, "ts": "soon"}),
        result("f.py::TestB::test", "passed", 1.0, None),
        result("f.py::TestC::test", "passed", 1.0, 0),
    ]
    assert [title(b).splitlines()[0] for b in groups(drawn(tmp_path, records), "bar")] == [
        "f.py::TestC"
    ]


def test_another_suffix_is_a_value_error_naming_the_path(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"timeline\.png must end in \.svg or \.html"):
        render_timeline(a_run(), tmp_path / "timeline.png")


def test_an_unwritable_path_is_a_one_line_timeline_unwritable(tmp_path: Path) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    target = blocker / "timeline.svg"
    with pytest.raises(TimelineUnwritable) as caught:
        render_timeline(a_run(), target)
    assert isinstance(caught.value, OSError)
    assert str(target) in str(caught.value) and "\n" not in str(caught.value)


def test_a_failed_write_keeps_the_earlier_file_and_no_scraps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "timeline.svg"
    render_timeline(a_run(), target)
    before = target.read_text()

    def disk_full(source: str, destination: Path) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("simpler.base.atomic_write.os.replace", disk_full)
    with pytest.raises(TimelineUnwritable, match="No space left on device"):
        render_timeline([], target)
    assert target.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["timeline.svg"]


def test_drawing_a_timeline_loads_no_device_code() -> None:
    code = (
        "import sys, simpler.reporting.timeline\n"
        "assert not {'cppyy', 'numpy', 'simpler.runner'} & set(sys.modules), sys.modules.keys()"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_single_instant_test_still_gets_an_axis(tmp_path: Path) -> None:
    svg = drawn(tmp_path, [result("f.py::TestA::test", "passed", 0.0, 3, duration_s=0.0)])
    axis = next(g for g in svg.iter(f"{NS}g") if g.get("class") == "axis")
    ticks = [t.text for t in axis.iter(f"{NS}text")]
    assert ticks[0] == "0 s" and ticks[-1] == "1 s"
    (bar,) = groups(svg, "bar", device="3")
    assert span_of(bar)[1] - span_of(bar)[0] >= 2  # an instant still shows
