"""The history page as a person sees it: rendered by a real browser (headless Chromium, Debian's
package), its table rows, strips and the shadow runs' miss line read back from the DOM the
browser built, with scripts on and off, and the strips found, cell by cell and in order, in the
colours of a screenshot."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import NamedTuple

import headless_chromium
import pytest
from headless_chromium import Browser, colour_runs, hex_rgb, read_png
from history_page_dom import read_rows, read_shadow

from simpler.history.model import LastFailure, ShadowMisses, StripMark, TestScore
from simpler.history.page import MARKS, render_page

WIDTH, HEIGHT = 1280, 2000
COMMITS = [f"{n:x}c0ffee{n:02d}" for n in range(1, 11)]
# Four tests over ten runs, as `simpler history flaky` sorts them: one broken, one flaky on
# retry, one stable victim of device faults (and one infra failure), one stable test whose
# node id would break a page that did not escape it.
TESTS = {  # node id: (its strip, its state, the Wilson 95% interval of its flake rate)
    "tests/st/test_conv.py::test_stride[2]": ("FFFFFFFFFF", "broken", (0.722, 1.0)),
    "tests/st/test_matmul.py::TestMatmul::test_large[fp16]": (
        "..R..F.R..",
        "flaky",
        (0.108, 0.603),
    ),
    "tests/st/test_softmax.py::test_rows": ("..D...D.I.", "stable", (0.0, 0.278)),
    "tests/st/test_cmp.py::test_cmp[a<b-\"q\"-'é'-中]": ("..........", "stable", (0.0, 0.278)),
}
STRIPS = {nodeid: strip for nodeid, (strip, _, _) in TESTS.items()}
# Three shadow runs of the ten: four failures, one of which the selection left out.
MISSED = "tests/st/test_conv.py::test_stride[2]"
SHADOW = ShadowMisses(
    runs=3, failures=4, missed=1, runs_with_misses=1, newest=(("run-09", MISSED),)
)


def _scores() -> list[TestScore]:
    scores = []
    for nodeid, (marks, state, (low, high)) in TESTS.items():
        own = [i for i, mark in enumerate(marks) if mark in "FR"]  # failures of its own
        red = [mark in "FDI" for mark in marks]  # runs that ended red, whatever the cause
        flips = sum(a != b for a, b in pairwise(mark == "F" for mark in marks))
        message = "AssertionError: 3 != 4"
        last = LastFailure(f"run-{own[-1] + 1:02d}", COMMITS[own[-1]], message) if own else None
        scores.append(
            TestScore(
                nodeid=nodeid,
                runs=len(marks),
                passed=red.count(False),
                failed_test=len(own),
                failed_device=marks.count("D"),
                failed_infra=marks.count("I"),
                pass_on_retry=marks.count("R"),
                same_commit_flips=0,
                flip_rate=flips / (len(marks) - 1),
                flake_rate=len(own) / len(marks),
                flake_rate_low=low,
                flake_rate_high=high,
                state=state,
                last_failure=last,
            )
        )
    return scores


def _strips() -> dict[str, list[StripMark]]:
    return {
        nodeid: [
            StripMark(f"run-{i + 1:02d}", COMMITS[i], mark, 1767225600.0 + 86400 * i)
            for i, mark in enumerate(marks)
        ]
        for nodeid, marks in STRIPS.items()
    }


@pytest.fixture
def browser(tmp_path: Path) -> Browser:
    return headless_chromium.browser_or_skip(tmp_path / "chromium-profile")


class Page(NamedTuple):
    path: Path
    scripts: bool  # whether the browser may run the page's script


@pytest.fixture(params=[True, False], ids=["scripts-on", "scripts-off"])
def page(tmp_path: Path, request: pytest.FixtureRequest) -> Page:
    text = render_page(
        _scores(),
        _strips(),
        {"test": 14, "device": 2, "infra": 1},
        title="simpler history · main",
        generated="2026-01-11 09:30 UTC",
        window="last 10 runs",
        shadow=SHADOW,
    )
    if not request.param:
        # Headless Chromium cannot dump or shoot a page with all scripts off (it scripts the
        # page to do either), so the page's own policy forbids its script instead: the browser
        # then runs none of it, as one with JavaScript off would.
        allowed = "script-src 'unsafe-inline'"
        assert allowed in text
        text = text.replace(allowed, "script-src 'none'")
    path = tmp_path / "history.html"
    path.write_text(text, encoding="utf-8")
    return Page(path, request.param)


def test_the_browser_shows_each_row_and_its_strip(browser: Browser, page: Page) -> None:
    seen = read_rows(browser.dump_dom(page.path))
    # The filter box is the script's own doing: it proves whether the script ran.
    assert ("input#filter" in seen.tags) is page.scripts
    assert [row["nodeid"] for row in seen.rows] == list(STRIPS)
    assert [row["state"] for row in seen.rows] == [state for _, state, _ in TESTS.values()]
    assert seen.hidden == [False] * len(STRIPS)
    assert ["".join(letter for letter, _ in strip) for strip in seen.strips] == list(
        STRIPS.values()
    )
    for strip in seen.strips:
        titles = [title for _, title in strip]
        assert [t.split(" \u00b7 ")[:2] for t in titles] == [
            [f"run run-{i + 1:02d}", f"commit {COMMITS[i]}"] for i in range(len(COMMITS))
        ]
    flaky = seen.rows[1]
    assert flaky["rate"].startswith("30.0%")
    assert "run-08" in flaky["last"] and COMMITS[7] in flaky["last"]
    assert "AssertionError: 3 != 4" in flaky["last"]


def test_the_browser_shows_what_the_selection_would_have_missed(
    browser: Browser, page: Page
) -> None:
    seen = read_shadow(browser.dump_dom(page.path))
    assert seen.line == (
        "The selection would have missed 1 of 4 failure(s) over 3 shadow run(s) (25%)."
    )
    assert seen.misses == [["run-09", MISSED]]


def test_the_strips_are_visible_in_a_screenshot(
    browser: Browser, page: Page, tmp_path: Path
) -> None:
    png = tmp_path / "history.png"
    browser.screenshot(page.path, png, WIDTH, HEIGHT)
    image = read_png(png)
    assert (image.width, image.height) == (WIDTH, HEIGHT)
    colours = {image.pixel(x, y) for y in range(0, HEIGHT, 4) for x in range(0, WIDTH, 4)}
    assert len(colours) > 20, "the screenshot is blank or nearly so"
    # Each cell is 14 px of one colour used nowhere else on the page, with a gap between
    # cells: a pixel row through the top of a strip, above the letters, reads the strip's
    # marks in order. The legend's cells read ".FRDIsQ", which no strip here is.
    palette = {hex_rgb(fill): mark for mark, (_, _, fill, _) in MARKS.items()}
    painted = {"".join(colour_runs(image, y, palette, min_length=8)) for y in range(HEIGHT)}
    for nodeid, marks in STRIPS.items():
        assert marks in painted, f"strip of {nodeid} not seen: {sorted(painted, key=len)[-8:]}"
