"""Every source file of simpler's the docs name exists: a module moved or renamed takes its
docs along (docs/architecture.md once named a ``test_quarantine_block.py`` that never was).

The docs also name users' files in their examples (``tests/test_a_sets.py``); those are not
checked. simpler's own are: a path under one of its folders, a link relative to the page, and
any bare module name on the architecture page, the map of the code."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
NAMED = re.compile(r"(?<![\w./-])((?:\.\./)*(?:[\w.-]+/)*[A-Za-z_]\w*\.py)\b")
OWN_FOLDERS = ("simpler/", "recovery/", "scripts/", "tests/ut/", "tests/it/")
MODULE_MAP = ROOT / "docs" / "architecture.md"
NOT_FILES = {"coverage.py"}  # the tool, not a file


def _own_modules() -> set[str]:
    tops = ("simpler", "recovery", "scripts")
    return {p.name for top in tops for p in (ROOT / top).rglob("*.py")} | {
        p.name for p in ROOT.glob("*.py")
    }


def _missing(page: Path, name: str, modules: set[str]) -> bool:
    if name.startswith("../"):
        return not (page.parent / name).resolve().exists()
    if name.startswith(OWN_FOLDERS):
        return not (ROOT / name).exists()
    return page == MODULE_MAP and "/" not in name and name not in modules | NOT_FILES


def test_every_file_of_simplers_a_doc_names_is_in_the_repository() -> None:
    modules = _own_modules()
    missing = sorted(
        f"{page.relative_to(ROOT)}: {match[1]}"
        for page in PAGES
        for match in NAMED.finditer(page.read_text(encoding="utf-8"))
        if _missing(page, match[1], modules)
    )
    assert missing == []


def test_a_renamed_module_is_caught(tmp_path: Path) -> None:
    """The rule itself: the name the architecture page once had is missing, a real one not."""
    modules = _own_modules()
    assert _missing(MODULE_MAP, "test_quarantine_block.py", modules)
    assert not _missing(MODULE_MAP, "quarantine_block.py", modules)
    assert _missing(ROOT / "docs" / "design.md", "../simpler/no_such_module.py", modules)
    assert not _missing(ROOT / "docs" / "design.md", "../simpler/devices.py", modules)
