"""A picture of a run: one lane per device, what ran there when, and where a card stalled.

Report records in, one SVG file (or an HTML page embedding it) out: bars of test classes and
Resource children, markers of lifecycle events, a band of retired time (docs/running.md, "A
picture of the run"). Standard library only: ``simpler report`` must stay cheap.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from simpler.base.atomic_write import write_atomically
from simpler.reporting.report_file import Record
from simpler.reporting.timeline_layout import (
    MARKER_KINDS,
    Bar,
    LaneKey,
    Marker,
    Timeline,
    build_timeline,
    fit_label,
    lane_label,
    nice_step,
    text_width,
)

__all__ = ["OUTCOME_COLOURS", "SUFFIXES", "TimelineUnwritable", "render_timeline", "timeline_svg"]

SUFFIXES = (".svg", ".html")
_LOOKS = {  # colour key: (fill, what the legend calls it)
    "passed": ("#2e7d32", "passed"),
    "recovered": ("#1565c0", "recovered"),
    "flaky": ("#f9a825", "flaky"),
    "skipped": ("#9e9e9e", "skipped"),
    "xfailed": ("#80cbc4", "xfailed"),
    "xpassed": ("#66bb6a", "xpassed"),
    "poison_skipped": ("#7b1fa2", "poison-skipped"),
    "failed": ("#c62828", "failed / error"),
    "child_ok": ("#2e7d32", "child job: rc 0"),
    "child_failed": ("#c62828", "child job: failed"),
    # Darker, and hatched: the child never finished on its own.
    "child_killed": ("#7f0000", "child job: killed / timed out"),
}
OUTCOME_COLOURS = {key: fill for key, (fill, _) in _LOOKS.items()} | {"error": "#c62828"}
_DARK_TEXT_ON = frozenset({"#f9a825", "#9e9e9e", "#80cbc4", "#66bb6a"})
Style = str | float
Shape = Callable[[ET.Element, float, float], None]
WIDTH, LANE_H, BAR_INSET, TOP, RUN_HEADER_H, AXIS_H, RIGHT = 1200, 28, 4, 44, 18, 34, 28
MARKER_GAP = 11.0  # px between markers of one lane: poison, reset, rebuild come within ms
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
BAND: dict[str, Style] = {"fill": "url(#retired)", "stroke": "#6a1b9a", "stroke_width": 0.8}
PHASE_LINE: dict[str, Style] = {"stroke": "#777", "stroke_dasharray": "3,3", "stroke_opacity": 0.7}
_SVG_NS = "http://www.w3.org/2000/svg"
# XML 1.0 cannot carry most control characters; test output and messages can.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


class TimelineUnwritable(OSError):
    """The timeline file cannot be written; the message is one line naming the path."""


def render_timeline(records: list[Record], path: Path) -> None:
    """Write the run's timeline to ``path`` (``.svg``, or ``.html`` with the SVG inline)."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"timeline path {target} must end in {' or '.join(SUFFIXES)}")
    svg = timeline_svg(records)
    _write(target, _html_page(svg) if suffix == ".html" else _svg_file(svg))


def timeline_svg(records: Sequence[Record]) -> str:
    """The timeline as one ``<svg>`` element, without an XML declaration."""
    timeline = build_timeline(records)
    svg = _draw(timeline) if timeline.bars else _empty()
    ET.indent(svg, space=" ")
    return ET.tostring(svg, encoding="unicode")


@dataclass(frozen=True)
class _Frame:
    """Where things go: the x of a time, the y of each lane's first row."""

    left: float
    span: float  # seconds shown, rounded up to a whole tick
    lane_top: dict[LaneKey, float]
    bottom: float  # below the last lane

    @property
    def plot_width(self) -> float:
        return WIDTH - self.left - RIGHT

    def x(self, seconds: float) -> float:
        return self.left + max(0.0, seconds) / self.span * self.plot_width


def _draw(timeline: Timeline) -> ET.Element:
    labels = {lane: lane_label(lane, timeline.merged) for lane in timeline.lanes}
    frame = _frame(timeline, max(text_width(label, 11) for label in labels.values()))
    svg = _svg_root()
    runs = len({run for run, _ in timeline.lanes})
    title = f"simpler run timeline · {runs} run(s) · {len(timeline.lanes)} lane(s)"
    _text(svg, 12, 20, title, 14, font_weight="bold")
    note = "time in seconds from each run's first record · hover a bar or marker for details"
    _text(svg, 12, 36, note, 10, "#555")
    _lanes(svg, timeline, frame, labels)
    _phase_lines(svg, timeline, frame)
    _axis(svg, frame)
    for band in timeline.bands:
        group = _group(svg, "band", band.tooltip, band.lane)
        x, top = frame.x(band.start), frame.lane_top[band.lane]
        height = timeline.tracks[band.lane] * LANE_H
        _rect(group, x, top, frame.x(band.end) - x, height, **BAND)
    placed = _place_markers(timeline.markers, frame)
    for bar in timeline.bars:
        _bar(svg, bar, frame, [x for marker, x in placed if marker.lane == bar.lane])
    for marker, x in placed:
        group = _group(svg, "marker", marker.tooltip, marker.lane, kind=marker.kind)
        _MARKER_SHAPES[marker.kind](group, x, frame.lane_top[marker.lane] + LANE_H / 2)
    return _sized(svg, _legend(svg, frame.bottom + AXIS_H))


def _frame(timeline: Timeline, label_width: float) -> _Frame:
    """Lanes stacked top to bottom, each run under a header row that names its phases."""
    lane_top: dict[LaneKey, float] = {}
    y = float(TOP)
    for index, lane in enumerate(timeline.lanes):
        if index == 0 or timeline.lanes[index - 1][0] != lane[0]:
            y += RUN_HEADER_H
        lane_top[lane] = y
        y += timeline.tracks[lane] * LANE_H
    step = nice_step(timeline.span / 8)
    span = step * max(1, math.ceil(timeline.span / step))  # at least one tick past 0
    return _Frame(min(360.0, label_width + 20), span, lane_top, y)


def _lanes(svg: ET.Element, timeline: Timeline, frame: _Frame, labels: dict[LaneKey, str]) -> None:
    for index, lane in enumerate(timeline.lanes):
        group = _group(svg, "lane", None, lane)
        top = frame.lane_top[lane]
        fill = "#f4f4f4" if index % 2 else "#fff"  # alternate shades: the eye follows a lane
        _rect(group, 0, top, WIDTH, timeline.tracks[lane] * LANE_H, fill=fill)
        label = fit_label(labels[lane], frame.left - 20, 11)
        _text(group, frame.left - 10, top + LANE_H / 2 + 4, label, 11, text_anchor="end")


def _phase_lines(svg: ET.Element, timeline: Timeline, frame: _Frame) -> None:
    """A faint line at every phase start and end; names in the run's header, never overlapping."""
    group = ET.SubElement(svg, "g", {"class": "phases"})
    for run in dict.fromkeys(run for run, _ in timeline.lanes):
        lanes = [lane for lane in timeline.lanes if lane[0] == run]
        top = frame.lane_top[lanes[0]] - RUN_HEADER_H
        bottom = frame.lane_top[lanes[-1]] + timeline.tracks[lanes[-1]] * LANE_H
        free_from = frame.left
        for mark in sorted((m for m in timeline.phases if m.run == run), key=lambda m: m.at):
            x = frame.x(mark.at)
            _line(group, x, top, x, bottom, class_=f"phase-{mark.event}", **PHASE_LINE)
            at, width = max(x + 3, free_from), text_width(mark.name, 10)
            if mark.event == "start" and at + width <= WIDTH - 4:
                _text(group, at, top + 13, mark.name, 10, "#444", font_style="italic")
                free_from = at + width + 8


def _axis(svg: ET.Element, frame: _Frame) -> None:
    group = ET.SubElement(svg, "g", {"class": "axis"})
    step = nice_step(frame.span / 8)
    _line(group, frame.left, frame.bottom, WIDTH - RIGHT, frame.bottom, stroke="#333")
    for index in range(round(frame.span / step) + 1):
        x = frame.x(index * step)
        _line(group, x, TOP, x, frame.bottom, stroke="#000", stroke_opacity=0.06)
        _line(group, x, frame.bottom, x, frame.bottom + 5, stroke="#333")
        _text(group, x, frame.bottom + 17, f"{index * step:g} s", 10, text_anchor="middle")


def _bar(svg: ET.Element, bar: Bar, frame: _Frame, marker_xs: list[float]) -> None:
    x = frame.x(bar.start)
    width = max(2.0, frame.x(bar.end) - x)  # an instant test must still show
    y = frame.lane_top[bar.lane] + bar.track * LANE_H + BAR_INSET
    height = LANE_H - 2 * BAR_INSET
    group = _group(svg, "bar", bar.tooltip, bar.lane, kind=bar.kind, outcome=bar.colour_key)
    _bar_shape(group, bar.colour_key, x, y, width, height)
    # The label stops short of the first marker on the bar: a marker must not hide a name.
    on_bar = [mx - x - 7 for mx in marker_xs if bar.track == 0 and x < mx < x + width]
    label = fit_label(bar.label, min([width, *on_bar]) - 8, 10)
    if label:
        dark = OUTCOME_COLOURS[bar.colour_key] in _DARK_TEXT_ON
        _text(group, x + 4, y + height / 2 + 3.5, label, 10, "#111" if dark else "#fff")


def _bar_shape(parent: ET.Element, key: str, x: float, y: float, w: float, h: float) -> None:
    """How a bar of this outcome looks: children outlined, killed children hatched too."""
    child = key.startswith("child_")
    outline: dict[str, Style] = {"stroke": "#111", "stroke_width": 1.2} if child else {}
    _rect(parent, x, y, w, h, fill=OUTCOME_COLOURS[key], rx=2, **outline)
    if key == "child_killed":
        _rect(parent, x, y, w, h, fill="url(#hatch)", rx=2)


def _place_markers(markers: list[Marker], frame: _Frame) -> list[tuple[Marker, float]]:
    """Each marker's x: at its time, or just right of the one before, so they read in order."""
    placed: list[tuple[Marker, float]] = []
    last_x: dict[LaneKey, float] = {}
    for marker in sorted(markers, key=lambda m: (m.lane, m.at)):
        x = max(frame.x(marker.at), last_x.get(marker.lane, -math.inf) + MARKER_GAP)
        last_x[marker.lane] = x
        placed.append((marker, x))
    return placed


def _cross(parent: ET.Element, x: float, y: float) -> None:
    path = f"M{x - 4:.1f},{y - 4:.1f}l8,8m-8,0l8,-8"
    ET.SubElement(parent, "path", _attrs(d=path, stroke="#fff", stroke_width=5.5))  # a halo
    ET.SubElement(parent, "path", _attrs(d=path, stroke="#d50000", stroke_width=2.6))


def _diamond(parent: ET.Element, x: float, y: float) -> None:
    _polygon(parent, [(x, y - 6), (x + 5, y), (x, y + 6), (x - 5, y)], "#ff6f00")


def _triangle(parent: ET.Element, x: float, y: float) -> None:
    _polygon(parent, [(x, y - 6), (x + 5.5, y + 4.5), (x - 5.5, y + 4.5)], "#00bfa5")


def _stop(parent: ET.Element, x: float, y: float) -> None:
    _rect(parent, x - 4.5, y - 4.5, 9, 9, fill="#111", stroke="#fff", stroke_width=1.5)


_MARKER_SHAPES: dict[str, Shape] = {
    "poisoned": _cross,
    "force_reset": _diamond,
    "rebuilt": _triangle,
    "skipped": _stop,
}


def _legend(svg: ET.Element, top: float) -> float:
    """Every colour and mark, flowed into rows that fit the width; the y below the last row."""

    def band(parent: ET.Element, x: float, y: float) -> None:
        _rect(parent, x - 8, y - 6, 16, 12, **BAND)

    def phase(parent: ET.Element, x: float, y: float) -> None:
        _line(parent, x, y - 7, x, y + 7, **PHASE_LINE)

    entries = [(name, _legend_bar(key)) for key, (_, name) in _LOOKS.items()]
    entries += [(MARKER_KINDS[kind], shape) for kind, shape in _MARKER_SHAPES.items()]
    entries += [("retired", band), ("phase start / end", phase)]
    group = ET.SubElement(svg, "g", {"class": "legend"})
    x, y = 12.0, top + 8
    for name, shape in entries:
        width = 40 + text_width(name, 10)
        if x + width > WIDTH - 12:
            x, y = 12.0, y + 20
        shape(group, x + 9, y)
        _text(group, x + 24, y + 3.5, name, 10)
        x += width
    return y + 18


def _legend_bar(key: str) -> Shape:
    def draw(parent: ET.Element, x: float, y: float) -> None:
        _bar_shape(parent, key, x - 8, y - 6, 16, 12)

    return draw


def _empty() -> ET.Element:
    svg = _svg_root()
    _text(svg, WIDTH / 2, 45, "no test or child records", 14, "#555", text_anchor="middle")
    return _sized(svg, 80)


def _svg_root() -> ET.Element:
    svg = ET.Element("svg", {"xmlns": _SVG_NS, "width": str(WIDTH), "font-family": FONT})
    defs = ET.SubElement(svg, "defs")
    for name, colour, opacity in (("hatch", "#000", 0.45), ("retired", "#6a1b9a", 0.3)):
        stripes = {"id": name, "width": "6", "height": "6", "patternUnits": "userSpaceOnUse"}
        pattern = ET.SubElement(defs, "pattern", stripes | {"patternTransform": "rotate(45)"})
        _rect(pattern, 0, 0, 3, 6, fill=colour, fill_opacity=opacity)
    ET.SubElement(svg, "rect", {"width": "100%", "height": "100%", "fill": "#fff"})
    return svg


def _sized(svg: ET.Element, height: float) -> ET.Element:
    svg.set("height", f"{height:.0f}")
    svg.set("viewBox", f"0 0 {WIDTH} {height:.0f}")
    return svg


def _group(
    parent: ET.Element, css_class: str, tooltip: str | None, lane: LaneKey, **data: str
) -> ET.Element:
    """A ``<g>`` that names its lane (and kind, outcome) in data attributes, and its tooltip."""
    attrs = {"class": css_class, "data-run": lane[0], "data-device": str(lane[1])}
    group = ET.SubElement(parent, "g", attrs | {f"data-{k}": v for k, v in data.items()})
    if tooltip:
        ET.SubElement(group, "title").text = _clean(tooltip)
    return group


def _rect(parent: ET.Element, x: float, y: float, w: float, h: float, **style: Style) -> None:
    ET.SubElement(parent, "rect", _attrs(x=x, y=y, width=max(0.0, w), height=h, **style))


def _line(parent: ET.Element, x1: float, y1: float, x2: float, y2: float, **style: Style) -> None:
    ET.SubElement(parent, "line", _attrs(x1=x1, y1=y1, x2=x2, y2=y2, **style))


def _polygon(parent: ET.Element, points: list[tuple[float, float]], fill: str) -> None:
    text = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    ET.SubElement(parent, "polygon", _attrs(points=text, fill=fill, stroke="#111", stroke_width=1))


def _text(
    parent: ET.Element, x: float, y: float, text: str, size: float, fill: str = "#111", **more: str
) -> None:
    element = ET.SubElement(parent, "text", _attrs(x=x, y=y, font_size=size, fill=fill, **more))
    element.text = _clean(text)


def _attrs(**values: Style) -> dict[str, str]:
    """SVG attributes from keywords: ``stroke_width`` -> ``stroke-width``, ``class_`` -> class."""
    return {key.rstrip("_").replace("_", "-"): _number(value) for key, value in values.items()}


def _number(value: Style) -> str:
    # Two decimals: enough for a pixel and for an opacity such as 0.06.
    return f"{value:.2f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)


def _clean(text: str) -> str:
    return _NOT_XML.sub("?", text)


def _svg_file(svg: str) -> str:
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{svg}\n'


def _html_page(svg: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        "<title>simpler run timeline</title>\n"
        "<style>body{margin:16px;background:#fff}</style>\n"
        f"</head>\n<body>\n{svg}\n</body>\n</html>\n"
    )


def _write(target: Path, text: str) -> None:
    """Write beside the final name, then rename: a reader never sees half a picture."""
    try:
        write_atomically(target, lambda stream: stream.write(text.encode("utf-8")))
    except OSError as error:
        reason = error.strerror or str(error)
        raise TimelineUnwritable(f"cannot write timeline {target}: {reason}") from error
