"""Every source file of simpler's the docs name exists: a module moved or renamed takes its
docs along (docs/architecture.md once named a ``test_quarantine_block.py`` that never was).

The docs also name users' files in their examples (``tests/test_a_sets.py``); those are not
checked. simpler's own are: a path under one of its folders, a link relative to the page, any
bare module name on the architecture page, the map of the code, and dotted module names."""

from __future__ import annotations

import ast
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


# A folder or C++ file of simpler's (`simpler/runner/cuda/`, `simpler/runner/runner.h`), not
# one under a run's own folder (`.simpler/logs/`), which the leading dot marks.
NAMED_OTHER = re.compile(r"(?<![\w./-])((?:simpler|recovery)(?:/[\w.-]+)*(?:\.(?:h|cpp)\b|/))")
# A dotted name: `simpler.report.read`. Not a TOML table (`[tool.simpler.affected]`).
DOTTED = re.compile(r"(?<![\w./-])((?:simpler|recovery)(?:\.[A-Za-z_]\w*)+)")


def test_every_folder_and_cpp_file_a_doc_names_is_in_the_repository() -> None:
    missing = sorted(
        f"{page.relative_to(ROOT)}: {match[1]}"
        for page in PAGES
        for match in NAMED_OTHER.finditer(page.read_text(encoding="utf-8"))
        if not (ROOT / match[1]).exists()
    )
    assert missing == []


def _top_level_names(module: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(module.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _unresolved(name: str) -> bool:
    """The longest prefix of ``name`` that is a module is missing, or what follows is not
    defined in it (read from its source: importing the runner would load the device library)."""
    parts = name.split(".")
    for split in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:split])
        for module in (base.with_suffix(".py"), base / "__init__.py"):
            if module.is_file():
                rest = parts[split:]
                return bool(rest) and rest[0] not in _top_level_names(module)
    return True


def test_every_module_a_doc_names_by_its_dotted_name_exists() -> None:
    missing = sorted(
        f"{page.relative_to(ROOT)}: {match[1]}"
        for page in PAGES
        for match in DOTTED.finditer(page.read_text(encoding="utf-8"))
        if _unresolved(match[1])
    )
    assert missing == []


def test_a_moved_package_or_dotted_name_is_caught() -> None:
    assert _unresolved("simpler.split.nope") and _unresolved("simpler.reporting.records.Nope")
    assert not _unresolved("simpler.reporting.records.TestRecord")
    assert not _unresolved("simpler.runner.note_launch")
    assert not NAMED_OTHER.search("[tool.simpler.affected] and .simpler/logs/")
