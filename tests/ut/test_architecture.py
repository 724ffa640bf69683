"""The layout stays readable: no import cycles, lower layers never import higher ones,
a thin top level, and no module a reader cannot hold in their head (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("simpler", "recovery")
MAX_LINES = 400
MAX_TOP_LEVEL_MODULES = 10

# Lowest first. A module may import its own layer and the layers below it, never above.
# ``simpler`` is the package's own top level: shared names and the faces (a face such as
# ``simpler.report`` re-exports a lower layer for users; product code imports the original).
LAYERS = (
    ("simpler.contract", "simpler.errors", "simpler.devices", "simpler.usage", "simpler"),
    # Generic helpers any room may use: atomic writes, TOML text, node ids, Python 3.10.
    ("simpler.base",),
    ("simpler.reporting",),
    ("simpler.coverage",),
    ("simpler.runner",),
    ("recovery",),
    ("simpler.scheduler",),
    # Process plumbing: starting, watching, reaping and warming processes, device locks, and
    # the executor that runs jobs under a placement policy of scheduler/.
    ("simpler.processes",),
    ("simpler.ci",),
    ("simpler.history",),
    # The impact map: built from a run's coverage, kept in the history, read to select tests.
    ("simpler.impact",),
    ("simpler.plugin",),
    # A split suite (its listing, shards, plan file, a job's share, the planned jobs a merged
    # report lacks) sits below both the orchestrator that runs a share and the fleet that
    # plans one; the capacity report and the planner collect a suite as the orchestrator does.
    ("simpler.split",),
    ("simpler.orchestrator",),
    ("simpler.capacity",),
    ("simpler.fleet",),
    # The entries: ``python -m simpler.capacity`` is ``simpler capacity``, through the CLI.
    ("simpler.commands", "simpler.cli", "simpler.report", "simpler.__main__",
     "simpler.capacity.__main__"),
)  # fmt: skip


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _product_modules() -> dict[str, Path]:
    return {
        _module_name(path): path for package in PRODUCT for path in (ROOT / package).rglob("*.py")
    }


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """Every product module ``path`` imports, at any depth of the file (function-level too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # ``from simpler.ci import gha`` imports the module simpler.ci.gha
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        else:
            continue
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _product_modules()
    graph = {name: _imports(path, modules) - {name} for name, path in modules.items()}
    for name in graph:  # importing a.b.c runs a/__init__ and a/b/__init__ first; not an edge
        graph[name] -= {p for p in graph[name] if name.startswith(p + ".")}
    return graph


def _layer(module: str) -> int:
    best, best_len = -1, -1
    for rank, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            matches = module == prefix or module.startswith(prefix + ".")
            if matches and len(prefix) > best_len:
                best, best_len = rank, len(prefix)
    return best


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_no_import_cycle_between_product_modules() -> None:
    assert _cycle(_graph()) == []


def test_every_product_module_sits_in_a_layer() -> None:
    assert [m for m in _product_modules() if _layer(m) < 0] == []


def test_no_module_imports_a_higher_layer() -> None:
    upward = [
        f"{module} -> {target}"
        for module, targets in _graph().items()
        for target in targets
        if _layer(target) > _layer(module)
    ]
    assert upward == []


def test_the_top_level_is_thin() -> None:
    top = sorted(p.name for p in (ROOT / "simpler").glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


@pytest.mark.parametrize("package", PRODUCT)
def test_no_product_module_is_over_the_size_limit(package: str) -> None:
    long = {
        str(path.relative_to(ROOT)): n
        for path in (ROOT / package).rglob("*.py")
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_the_architecture_page_names_every_subpackage() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text()
    subpackages = sorted(
        f"simpler/{p.parent.name}" for p in (ROOT / "simpler").glob("*/__init__.py")
    )
    assert [name for name in subpackages if name not in page] == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
