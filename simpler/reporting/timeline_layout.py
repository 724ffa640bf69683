"""What a run's timeline shows, as data: lanes, bars, markers and bands, in seconds.

One job: report records in, a :class:`Timeline` out. Every time is in seconds from its own
run's first record, so merged CI shards share one axis with each run starting at 0 (their
wall clocks belong to different machines and say nothing about each other).
``simpler.reporting.timeline`` turns the result into pixels with the measures here (text
widths, tick steps). Pure: no files, no environment.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from simpler.base.nodeids import class_of
from simpler.reporting.records import (
    ChildRecord,
    DeviceRetiredRecord,
    LifecycleRecord,
    PhaseRecord,
    Record,
    TestRecord,
)
from simpler.reporting.resource_block import child_failed, describe_exit, devices_text

__all__ = [
    "MARKER_KINDS",
    "WORST_FIRST",
    "Band",
    "Bar",
    "LaneKey",
    "Marker",
    "PhaseMark",
    "Timeline",
    "build_timeline",
    "fit_label",
    "lane_label",
    "nice_step",
    "text_width",
]

# A class shows its worst test: a class with one failure among passes must read as red.
WORST_FIRST = (
    "error",
    "failed",
    "poison_skipped",
    "flaky",
    "recovered",
    "xpassed",
    "passed",
    "xfailed",
    "skipped",
)
MARKER_KINDS = {
    "poisoned": "poisoned",
    "force_reset": "force reset",
    "rebuilt": "rebuilt",
    "skipped": "gave up (later tests skipped)",
}
CHAR_EM = 0.62  # a generous average glyph width of a sans-serif font, in em
_SHOWN_ERRORS = 3  # device errors named in one class tooltip

LaneKey = tuple[str, int]  # (run, device)


@dataclass(frozen=True)
class Bar:
    lane: LaneKey
    start: float
    end: float
    kind: str  # "class" or "child"
    colour_key: str  # an outcome, or child_ok / child_failed / child_killed
    label: str  # the short name drawn inside the bar when it fits
    tooltip: str
    track: int = 0  # row inside the lane, when bars of one lane overlap in time


@dataclass(frozen=True)
class Marker:
    lane: LaneKey
    at: float
    kind: str  # a key of MARKER_KINDS
    details: str  # what the lifecycle record says: trigger, worker, test, rc and where
    count: int = 1  # the same transition repeated at once (reset attempts)

    @property
    def tooltip(self) -> str:
        times = f" ({self.count} times)" if self.count > 1 else ""
        head = f"dev {self.lane[1]}: {MARKER_KINDS[self.kind]}{times} at {self.at:.2f} s"
        return f"{head}\n{self.details}" if self.details else head


@dataclass(frozen=True)
class Band:
    lane: LaneKey
    start: float
    end: float
    tooltip: str


@dataclass(frozen=True)
class PhaseMark:
    run: str
    at: float
    name: str
    event: str  # "start" or "end"


@dataclass
class Timeline:
    lanes: list[LaneKey] = field(default_factory=list)  # sorted by run, then device
    tracks: dict[LaneKey, int] = field(default_factory=dict)
    bars: list[Bar] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)
    bands: list[Band] = field(default_factory=list)
    phases: list[PhaseMark] = field(default_factory=list)
    span: float = 0.0  # seconds of the longest run

    @property
    def merged(self) -> bool:
        return len({run for run, _ in self.lanes}) > 1


def build_timeline(records: Sequence[Record]) -> Timeline:
    timed = [r for r in records if r.ts is not None]
    origins, ends = _run_bounds(timed)
    shift = {run: -origin for run, origin in origins.items()}
    timeline = Timeline(span=max((ends[run] - origins[run] for run in origins), default=0.0))
    timeline.bars = _pack(_class_bars(timed, shift) + _child_bars(timed, shift), timeline)
    timeline.markers = _markers(timed, shift)
    timeline.bands = _bands(timed, shift, ends)
    timeline.phases = [
        PhaseMark(r.run, _ts(r) + shift[r.run], r.phase or "?", r.event)
        for r in timed
        if isinstance(r, PhaseRecord) and (r.is_start or r.is_end)
    ]
    used = {bar.lane for bar in timeline.bars} | {m.lane for m in timeline.markers}
    timeline.lanes = sorted(used | {band.lane for band in timeline.bands})
    for lane in timeline.lanes:
        timeline.tracks.setdefault(lane, 1)
    return timeline


def _run_bounds(records: Iterable[Record]) -> tuple[dict[str, float], dict[str, float]]:
    # A bar starts before its record was written: the run starts at its earliest bar too.
    origins: dict[str, float] = {}
    ends: dict[str, float] = {}
    for record in records:
        run, ts = record.run, _ts(record)
        drawn = isinstance(record, TestRecord | ChildRecord)
        origins[run] = min(origins.get(run, ts), ts - _duration(record) if drawn else ts)
        ends[run] = max(ends.get(run, ts), ts)
    return origins, ends


def _class_bars(records: Iterable[Record], shift: dict[str, float]) -> list[Bar]:
    streams: dict[tuple[str, int, str], list[TestRecord]] = defaultdict(list)
    for record in records:
        if isinstance(record, TestRecord) and record.device is not None and record.nodeid:
            streams[(record.run, record.device, record.phase)].append(record)
    return [
        _class_bar((run, device), phase, segment, shift[run])
        for (run, device, phase), tests in streams.items()
        for segment in _segments(tests)
    ]


def _segments(tests: list[TestRecord]) -> list[list[TestRecord]]:
    """Runs of consecutive tests of one class and attempt: one bar each.

    A class is one run of tests under xdist's loadfile; in the retry phase classes
    interleave and each attempt is a fresh process, and a bar spanning all of them
    would claim the device for time in which other work (or nothing) ran.
    """
    segments: list[list[TestRecord]] = []
    for test in sorted(tests, key=lambda t: _ts(t) - _duration(t)):
        if segments and _segment_key(segments[-1][-1]) == _segment_key(test):
            segments[-1].append(test)
        else:
            segments.append([test])
    return segments


def _segment_key(test: TestRecord) -> tuple[str, int | None]:
    return class_of(test.nodeid), test.attempt


def _class_bar(lane: LaneKey, phase: str, tests: list[TestRecord], shift: float) -> Bar:
    name, attempt = _segment_key(tests[0])
    start = min(_ts(t) - _duration(t) for t in tests) + shift
    end = max(_ts(t) for t in tests) + shift
    outcomes = Counter(t.outcome or "unknown" for t in tests)
    worst = min(outcomes, key=lambda o: WORST_FIRST.index(o) if o in WORST_FIRST else -1)
    counts = ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items(), key=lambda p: -p[1]))
    tried = f" (attempt {attempt})" if attempt is not None and attempt > 1 else ""
    lines = [name + tried, f"{worst}: {counts}", _where(lane, phase, start, end)]
    lines += [_device_error(t) for t in tests if t.rc is not None][:_SHOWN_ERRORS]
    colour = worst if worst in WORST_FIRST else "error"  # an unknown verdict is no pass
    return Bar(lane, start, end, "class", colour, _short(name), "\n".join(lines))


def _child_bars(records: Iterable[Record], shift: dict[str, float]) -> list[Bar]:
    bars = []
    for record in records:
        if not isinstance(record, ChildRecord):
            continue
        run, end = record.run, _ts(record) + shift[record.run]
        start = end - _duration(record)
        label = record.label or record.nodeid or "?"
        killed = record.timed_out or bool(record.signal)
        failed = "child_failed" if child_failed(record) else "child_ok"
        colour = "child_killed" if killed else failed
        ending = f"{describe_exit(record)} · devices {devices_text(record)}"
        where = _where(None, record.phase, start, end)
        tooltip = f"child {label}\n{ending}\n{where}"
        for device in record.devices:
            bars.append(Bar((run, device), start, end, "child", colour, _short(label), tooltip))
    return bars


def _pack(bars: list[Bar], timeline: Timeline) -> list[Bar]:
    """Give each bar the first row of its lane that is free at its start (greedy packing)."""
    packed: list[Bar] = []
    row_ends: dict[LaneKey, list[float]] = defaultdict(list)
    for bar in sorted(bars, key=lambda b: (b.lane, b.start, b.end)):
        rows = row_ends[bar.lane]
        track = next((i for i, end in enumerate(rows) if end <= bar.start + 1e-6), len(rows))
        if track == len(rows):
            rows.append(bar.end)
        rows[track] = bar.end
        packed.append(replace(bar, track=track))
    timeline.tracks.update({lane: len(rows) for lane, rows in row_ends.items()})
    return packed


def _markers(records: Iterable[Record], shift: dict[str, float]) -> list[Marker]:
    markers: list[Marker] = []
    previous: dict[tuple[str, str], tuple[str, int]] = {}  # (run, worker) -> (dest, index)
    for record in records:
        if not isinstance(record, LifecycleRecord):
            continue
        dest, device, run, worker = record.dest, record.device, record.run, record.worker
        if dest not in MARKER_KINDS or device is None:
            previous.pop((run, worker), None)  # healthy, closed: what follows is a new event
            continue
        at = _ts(record) + shift[run]
        last_dest, index = previous.get((run, worker), ("", -1))
        if last_dest == dest:  # a reset retried three times is one event, not three markers
            markers[index] = replace(markers[index], count=markers[index].count + 1)
            continue
        previous[(run, worker)] = (dest, len(markers))
        said = (("trigger", record.trigger), ("worker", worker), ("nodeid", record.nodeid))
        details = [f"{key}: {value}" for key, value in said if value]
        if record.rc is not None:
            details.append(_device_error(record))
        markers.append(Marker((run, device), at, dest, "\n".join(details)))
    return markers


def _bands(
    records: Iterable[Record], shift: dict[str, float], ends: dict[str, float]
) -> list[Band]:
    bands = []
    for record in records:
        if not isinstance(record, DeviceRetiredRecord):
            continue
        run = record.run
        start, end = _ts(record) + shift[run], ends[run] + shift[run]
        reason = record.reason or "no reason recorded"
        for device in record.devices:
            tooltip = f"dev {device} retired from {start:.2f} s to the end of the run: {reason}"
            bands.append(Band((run, device), start, end, tooltip))
    return bands


def lane_label(lane: LaneKey, merged: bool) -> str:
    return f"{lane[0] or '(no run id)'} · dev {lane[1]}" if merged else f"dev {lane[1]}"


def text_width(text: str, size: float) -> float:
    """An upper estimate of ``text``'s width in px: an estimate must not let labels overflow."""
    return len(text) * size * CHAR_EM


def fit_label(label: str, room: float, size: float) -> str:
    """``label``, or its start and an ellipsis, when that fits in ``room`` px; else ``""``."""
    chars = int(room / (size * CHAR_EM) + 1e-6)
    if len(label) <= chars:
        return label
    return label[: chars - 1] + "…" if chars >= 6 else ""  # "Tes…" names nothing


def nice_step(rough: float) -> float:
    """1, 2 or 5 times a power of ten, at least ``rough``: tick labels people can read."""
    if rough <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(rough))
    return next(step * power for step in (1, 2, 5, 10) if step * power >= rough)


def _where(lane: LaneKey | None, phase: str, start: float, end: float) -> str:
    device = f"dev {lane[1]} · " if lane else ""
    return f"{device}phase {phase or '?'} · {start:.2f} s → {end:.2f} s ({end - start:.2f} s)"


def _device_error(record: TestRecord | LifecycleRecord) -> str:
    test = record.nodeid.rsplit("::", 1)[-1]
    where = f" at {record.where}" if record.where else ""
    return f"{test + ': ' if test else ''}rc {record.rc}{where}"


def _short(name: str) -> str:
    """``f.py::TestA`` -> ``TestA``; ``dir/f.py`` -> ``f.py``; ``f.py::T::t`` -> ``T::t``."""
    parts = name.split("::")
    return "::".join(parts[1:]) if len(parts) > 1 else parts[0].rsplit("/", 1)[-1]


def _ts(record: Record) -> float:
    return record.ts or 0.0


def _duration(record: Record) -> float:
    """How long a drawn record's test or child ran (0 for any other record)."""
    duration = record.duration_s if isinstance(record, TestRecord | ChildRecord) else None
    return max(0.0, duration or 0.0)
