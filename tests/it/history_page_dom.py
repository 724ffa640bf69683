"""Reads a history page's flaky table back from the DOM a browser built: each row's cells as
text and each strip's letters with their tooltips, and the shadow runs' section (the miss
line and the missed tests), for the tests that render the page."""

from __future__ import annotations

from html.parser import HTMLParser


class PageRows(HTMLParser):
    """The flaky table's rows as text, cell by cell, and each strip's letters and tooltips."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[dict[str, str]] = []
        self.strips: list[list[tuple[str, str]]] = []
        self.hidden: list[bool] = []
        self.tags: set[str] = set()
        self._in_table = self._in_body = False
        self._cell: str | None = None
        self._mark: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.tags.add(f"{tag}#{found['id']}" if found.get("id") else tag)
        if tag == "table":
            self._in_table = found.get("id") == "scores"
        elif tag == "tbody" and self._in_table:
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self.rows.append({})
            self.strips.append([])
            self.hidden.append("hidden" in found)
        elif tag == "td" and self._in_body:
            self._cell = (found.get("class") or "").split()[0]
            self.rows[-1][self._cell] = ""
        elif tag == "span" and self._cell == "strip" and "m" in (found.get("class") or "").split():
            self._mark = found.get("title") or ""
            self.strips[-1].append(("", self._mark))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("table", "tbody"):
            self._in_table = self._in_table and tag == "tbody"
            self._in_body = False
        elif tag == "td":
            self._cell = None
        elif tag == "span":
            self._mark = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self.rows[-1][self._cell] += data
        if self._mark is not None:
            letter, title = self.strips[-1][-1]
            self.strips[-1][-1] = (letter + data, title)


def read_rows(dom: str) -> PageRows:
    """The rows and strips of a history page's DOM, as the browser serialised it."""
    rows = PageRows()
    rows.feed(dom)
    rows.close()
    return rows


class ShadowSection(HTMLParser):
    """The shadow runs' section: its miss line, and each missed test's cells as text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.line = ""
        self.misses: list[list[str]] = []
        self._in_line = self._in_table = self._in_misses = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "p" and "shadow-line" in (found.get("class") or "").split():
            self._in_line = True
        elif tag == "table" and found.get("id") == "misses":
            self._in_table = True
        elif tag == "tbody" and self._in_table:
            self._in_misses = True
        elif tag == "tr" and self._in_misses:
            self.misses.append([])
        elif tag == "td" and self._in_misses:
            self.misses[-1].append("")
            self._cell = self.misses[-1]

    def handle_endtag(self, tag: str) -> None:
        if tag == "p":
            self._in_line = False
        elif tag in ("table", "tbody"):
            self._in_table = self._in_table and tag == "tbody"
            self._in_misses = False
        elif tag == "td":
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._in_line:
            self.line += data
        if self._cell is not None:
            self._cell[-1] += data


def read_shadow(dom: str) -> ShadowSection:
    """The shadow runs' section of a history page's DOM, as the browser serialised it."""
    section = ShadowSection()
    section.feed(dom)
    section.close()
    return section
