"""Every relative link of the README and the docs leads to a file that exists, and
docs/index.md lists every page of docs/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# [text](target) and [text](target "title"); an image's ![alt](src) is a link too.
LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|#)", re.IGNORECASE)  # http:, mailto:, #anchor


def _relative_links(page: Path) -> list[str]:
    # Code blocks and code spans show text, not links.
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)
    text = re.sub(r"`[^`\n]*`", "", text)
    return [target for target in LINK.findall(text) if not EXTERNAL.match(target)]


def test_the_pages_have_relative_links_to_check() -> None:
    assert _relative_links(ROOT / "README.md") and _relative_links(ROOT / "docs" / "index.md")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_points_to_a_file_that_exists(page: Path) -> None:
    broken = [
        target
        for target in _relative_links(page)
        if not (page.parent / target.split("#", 1)[0]).exists()
    ]
    assert broken == [], f"{page.relative_to(ROOT)} links to files that do not exist"


def test_the_index_lists_every_page() -> None:
    listed = {target.split("#", 1)[0] for target in _relative_links(ROOT / "docs" / "index.md")}
    pages = {page.name for page in (ROOT / "docs").glob("*.md")} - {"index.md"}
    assert sorted(pages - listed) == []
