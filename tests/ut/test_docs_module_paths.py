"""Every module, file and package of simpler the docs name exists: a moved or renamed module
cannot leave a page pointing at nothing."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
PACKAGES = ("simpler", "recovery")

# A path in the repository: `simpler/reporting/records.py`, `simpler/runner/cuda/`. Not one
# under a run's own folder (`.simpler/logs/`), which a leading dot or word character marks.
_PATH = re.compile(r"(?<![\w./-])((?:simpler|recovery)(?:/[\w.-]+)*(?:\.(?:py|h|cpp)\b|/))")
# A module named inside simpler/ without the prefix: `reporting/records.py`.
_SUBPACKAGES = sorted(p.name for p in (ROOT / "simpler").iterdir() if (p / "__init__.py").is_file())
_INNER_PATH = re.compile(
    rf"(?<![\w./-])((?:{'|'.join(_SUBPACKAGES)})(?:/[\w.-]+)+\.(?:py|h|cpp)\b)"
)
# A dotted name: `simpler.report.read`, `simpler.runner.note_launch`. Not a TOML table
# (`[tool.simpler.affected]`), which the leading dot marks.
_DOTTED = re.compile(r"(?<![\w./-])((?:simpler|recovery)(?:\.[A-Za-z_]\w*)+)")


def _named(pattern: re.Pattern[str]) -> list[tuple[str, str]]:
    return sorted(
        {(page.name, m.group(1)) for page in PAGES for m in pattern.finditer(page.read_text())}
    )


@pytest.mark.parametrize(("page", "path"), _named(_PATH))
def test_every_path_the_docs_name_exists(page: str, path: str) -> None:
    assert (ROOT / path).exists(), f"{page} names {path}, which does not exist"


def test_every_module_the_docs_name_inside_simpler_exists() -> None:
    missing = [(page, p) for page, p in _named(_INNER_PATH) if not (ROOT / "simpler" / p).exists()]
    assert missing == []


@cache
def _top_level_names(module: Path) -> frozenset[str]:
    names: set[str] = set()
    for node in ast.parse(module.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return frozenset(names)


def _module_file(parts: list[str]) -> Path | None:
    base = ROOT.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@pytest.mark.parametrize(("page", "name"), _named(_DOTTED))
def test_every_dotted_name_the_docs_use_resolves(page: str, name: str) -> None:
    """The longest prefix that is a module exists, and what follows is defined in it (read
    from its source: importing the runner would load the device library)."""
    parts = name.split(".")
    for split in range(len(parts), 0, -1):
        module = _module_file(parts[:split])
        if module is not None:
            rest = parts[split:]
            assert not rest or rest[0] in _top_level_names(module), (
                f"{page} names {name}: {'.'.join(parts[:split])} has no {rest[0]}"
            )
            return
    pytest.fail(f"{page} names {name}, which is no module of the repository")
