"""The history page's HTML, read back with the standard library's parser: the rows and strips a
person reads, escaping that survives hostile node ids, and nothing fetched from anywhere."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

from simpler.history.model import LastFailure, ShadowMisses, StripMark, TestScore
from simpler.history.page import MARKS, render_page

VOID = frozenset({"meta", "br", "input", "link", "img", "hr", "wbr"})
HOSTILE = "tests/st/test_x.py::test_cmp[<script>alert(\"x\")</script>-'q'-&amp;-é-中-\x00-\ud800]"
EXTERNAL = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def all(self, tag: str | None = None, cls: str | None = None) -> list[Node]:
        found = []
        for child in self.children:
            if isinstance(child, Node):
                if (tag is None or child.tag == tag) and (cls is None or cls in child.classes()):
                    found.append(child)
                found += child.all(tag, cls)
        return found

    def one(self, tag: str | None = None, cls: str | None = None) -> Node:
        (node,) = self.all(tag, cls)
        return node

    def by_id(self, wanted: str) -> Node | None:
        return next((n for n in self.all() if n.attrs.get("id") == wanted), None)


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.open = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.open[-1].children.append(node)
        if tag not in VOID:
            self.open.append(node)

    def handle_endtag(self, tag: str) -> None:
        # Strict: the page must close what it opens, in order; a stray tag is a bug.
        assert self.open[-1].tag == tag, f"</{tag}> closes <{self.open[-1].tag}>"
        self.open.pop()

    def handle_data(self, data: str) -> None:
        self.open[-1].children.append(data)


def parse(page: str) -> Node:
    builder = _Builder()
    builder.feed(page)
    builder.close()
    assert builder.open == [builder.root], "unclosed elements"
    return builder.root


def score(nodeid: str, state: str = "stable", **fields: Any) -> TestScore:
    values: dict[str, Any] = {
        "runs": 10,
        "passed": 10,
        "failed_test": 0,
        "failed_device": 0,
        "failed_infra": 0,
        "pass_on_retry": 0,
        "same_commit_flips": 0,
        "flip_rate": 0.0,
        "flake_rate": 0.0,
        "flake_rate_low": 0.0,
        "flake_rate_high": 0.278,
    }
    return TestScore(nodeid=nodeid, state=state, **(values | fields))


def strip(marks: str) -> list[StripMark]:
    return [StripMark(f"run-{i}", f"c0ffee{i:02d}", mark) for i, mark in enumerate(marks)]


def page(
    scores: list[TestScore],
    strips: dict[str, list[StripMark]],
    shadow: ShadowMisses | None = None,
    **counts: int,
) -> str:
    attribution = counts or {"test": 4, "device": 2, "infra": 1}
    return render_page(
        scores,
        strips,
        attribution,
        title="history",
        generated="2026-01-02",
        window="30 days",
        shadow=shadow,
    )


def rows(document: Node) -> list[Node]:
    table = document.by_id("scores")
    assert table is not None
    return table.one("tbody").all("tr")


def test_one_row_per_test_in_the_order_given_with_its_state() -> None:
    scores = [
        score("t.py::broken", "broken", passed=0, failed_test=10, flake_rate=1.0),
        score("t.py::flaky", "flaky", passed=8, failed_test=2, flake_rate=0.2),
        score("t.py::victim", "stable", passed=8, failed_device=2),
        score("t.py::solid", "device-sensitive"),
    ]
    found = rows(parse(page(scores, {})))
    assert [r.one("td", "nodeid").text() for r in found] == [s.nodeid for s in scores]
    assert [r.one("td", "state").text() for r in found] == [s.state for s in scores]
    assert all(f"state-{s.state}" in r.classes() for r, s in zip(found, scores, strict=True))
    flaky = [c.text() for c in found[1].all("td")]
    assert flaky[2].startswith("20.0%")  # the flake rate, then its interval
    assert flaky[3:9] == ["10", "8", "2", "0", "0", "0"]


def test_each_state_has_a_look_of_its_own() -> None:
    style = parse(page([score("t.py::a")], {})).one("style").text()
    looks = dict(re.findall(r"\.state-([\w-]+) \.badge\{background:(#[0-9a-f]+)", style))
    assert set(looks) == {"broken", "flaky", "device-sensitive", "stable"}
    assert len(set(looks.values())) == 4


def test_each_strip_has_one_cell_per_run_oldest_first_with_its_letter() -> None:
    marks = {"t.py::a": "..FR.D", "t.py::b": "IsQ", "t.py::c": ""}
    scores = [score(nodeid) for nodeid in marks]
    found = rows(parse(page(scores, {n: strip(m) for n, m in marks.items() if m})))
    for row, (nodeid, expected) in zip(found, marks.items(), strict=True):
        cells = row.one("td", "strip").all("span", "m")
        assert "".join(c.text() for c in cells) == expected, nodeid
        for index, (cell, mark) in enumerate(zip(cells, expected, strict=True)):
            assert f"m-{MARKS[mark][0]}" in cell.classes()
            assert f"run run-{index}" in cell.attrs["title"]
            assert f"commit c0ffee{index:02d}" in cell.attrs["title"]
    assert found[2].one("td", "strip").text() == "no runs"


def test_a_hostile_node_id_reads_back_as_text_and_injects_nothing() -> None:
    failure = LastFailure("r<1>", "abc\"'", '<img src="http://evil.example/x.png"> & boom')
    hostile = score(HOSTILE, "flaky", last_failure=failure)
    text = page([hostile], {HOSTILE: [StripMark('r"1', "<c>", "F")]})
    text.encode("utf-8")  # a lone surrogate would raise here; it must have been replaced
    document = parse(text)
    (row,) = rows(document)
    shown = HOSTILE.replace("\x00", "\ufffd").replace("\ud800", "\ufffd")
    assert row.one("td", "nodeid").text() == shown
    assert row.attrs["data-nodeid"] == shown
    assert len(document.all("script")) == 1  # the page's own filter box, nothing injected
    assert document.all("img") == []
    assert "<img" in row.one("td", "last").text()  # shown as the text it is
    cell = row.one("span", "m")
    assert 'run r"1' in cell.attrs["title"] and "commit <c>" in cell.attrs["title"]


def test_the_page_fetches_nothing() -> None:
    failure = LastFailure("r1", "abc", "see https://example.org/x and //cdn.example/y.js")
    text = page([score("t.py::a", last_failure=failure)], {"t.py::a": strip(".F")})
    document = parse(text)
    for node in document.all():
        for name in ("src", "href", "action", "srcset", "poster", "data", "background"):
            value = node.attrs.get(name)
            assert value is None or not EXTERNAL.match(value), (node.tag, name, value)
        assert node.tag not in {"link", "img", "iframe", "object", "embed"}
    style = document.one("style").text()
    assert "url(" not in style and "@import" not in style and "@font-face" not in style
    csp = [
        m for m in document.all("meta") if m.attrs.get("http-equiv") == "Content-Security-Policy"
    ]
    assert csp and csp[0].attrs["content"].startswith("default-src 'none'")


def test_attribution_counts_each_cause_with_what_it_means() -> None:
    document = parse(page([score("t.py::a")], {}, test=5, device=3, infra=1))
    causes = document.by_id("attribution")
    assert causes is not None
    table = {r.attrs["data-cause"]: r for r in causes.one("tbody").all("tr")}
    assert list(table) == ["test", "device", "infra"]
    assert [table[c].one("td", "count").text() for c in table] == ["5", "3", "1"]
    assert "count against" in table["test"].text()
    assert "poison" in table["device"].text() and "crashed" in table["device"].text()
    assert "incomplete" in table["infra"].text() and "timed out" in table["infra"].text()


def test_the_legend_names_every_mark() -> None:
    legend = parse(page([score("t.py::a")], {})).by_id("legend")
    assert legend is not None
    assert [cell.text() for cell in legend.all("span", "m")] == list(MARKS)


def test_the_last_failure_shows_its_run_commit_and_first_line() -> None:
    failure = LastFailure("run-7", "0123456789abcdef", "AssertionError: 1 != 2\nTraceback ...")
    (row,) = rows(parse(page([score("t.py::a", last_failure=failure)], {})))
    last = row.one("td", "last")
    assert [c.text() for c in last.all("code")] == ["run-7", "0123456789ab"]
    assert last.one("span", "msg").text() == "AssertionError: 1 != 2\u2026"
    assert "Traceback" in last.one("span", "msg").attrs["title"]


def test_an_empty_history_says_so_instead_of_an_empty_table() -> None:
    document = parse(page([], {}, test=0, device=0, infra=0))
    empty = document.by_id("empty")
    assert empty is not None and "No runs in the window" in empty.text()
    assert document.by_id("scores") is None and document.all("script") == []


def test_the_shadow_runs_say_how_many_failures_the_selection_would_have_missed() -> None:
    misses = ShadowMisses(3, 4, 1, 1, (("run-9", HOSTILE),))
    document = parse(page([score("t.py::a")], {}, misses))
    section = document.by_id("shadow")
    assert section is not None and section.one("h2").text() == "Selection (shadow runs)"
    assert section.one("p", "shadow-line").text() == (
        "The selection would have missed 1 of 4 failure(s) over 3 shadow run(s) (25%)."
    )
    assert "1 of 3 shadow run(s) had a miss" in section.one("p", "meta").text()
    table = document.by_id("misses")
    assert table is not None
    ((run, test),) = [[c.text() for c in r.all("td")] for r in table.one("tbody").all("tr")]
    assert run == "run-9"
    assert test == HOSTILE.replace("\x00", "\ufffd").replace("\ud800", "\ufffd")
    assert len(document.all("script")) == 1  # the hostile node id injected nothing


def test_shadow_runs_that_missed_nothing_say_so_without_a_table() -> None:
    document = parse(page([score("t.py::a")], {}, ShadowMisses(2, 3, 0, 0)))
    section = document.by_id("shadow")
    assert section is not None and document.by_id("misses") is None
    assert "missed 0 of 3 failure(s) over 2 shadow run(s) (0%)" in section.text()
    assert "No failure was left out." in section.text()


def test_a_history_without_shadow_runs_says_none_was_kept() -> None:
    for document in (parse(page([score("t.py::a")], {})), parse(page([], {}, test=0))):
        section = document.by_id("shadow")
        assert section is not None and document.by_id("misses") is None
        assert section.one("p", "shadow-line").text() == (
            "No shadow run (simpler run --affected-shadow) kept in the window."
        )
