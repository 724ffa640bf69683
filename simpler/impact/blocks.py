"""A Python file's code blocks, the unit the impact map records a test against.

A block is one function or method (its decorators, signature and body; a nested function
is a block of its own and part of the one around it), or the file's module-level code:
everything that runs when the file is imported (imports, constants, class bodies, the
``def`` statements' decorators and defaults). Each block has a
checksum of its source's syntax tree: comments, blank lines, formatting and docstrings do
not change it; any change to what the code does does.

``blocks_of(source)`` gives the blocks of a file and the block each line belongs to (the
innermost function around it, else the module), so the lines a test ran map to the blocks
it ran.
"""

from __future__ import annotations

import ast
import copy
import hashlib
from dataclasses import dataclass, field

__all__ = ["MODULE", "Block", "FileBlocks", "blocks_of"]

MODULE = "<module>"  # the qualified name of a file's module-level block
Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Block:
    qualname: str  # MODULE, or as Python names it: "Foo.bar", "outer.<locals>.inner"
    checksum: str
    first_line: int
    last_line: int


@dataclass
class FileBlocks:
    blocks: dict[str, Block] = field(default_factory=dict)  # qualname -> block
    _by_line: dict[int, str] = field(default_factory=dict)  # line -> innermost function

    def block_at(self, line: int) -> str:
        """The qualified name of the block that line ``line`` belongs to."""
        return self._by_line.get(line, MODULE)


def blocks_of(source: str) -> FileBlocks:
    """The blocks of ``source``; SyntaxError when it is not Python."""
    tree = ast.parse(source)
    found = FileBlocks()
    functions: list[tuple[str, Function]] = []
    _collect(tree, "", functions)
    for qualname, node in functions:
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        last = node.end_lineno or node.lineno
        found.blocks[qualname] = Block(qualname, _checksum(node), first, last)
        # Outer functions come first: an inner one overwrites its own lines.
        for line in range(first, last + 1):
            found._by_line[line] = qualname
    last_line = max((getattr(n, "end_lineno", 0) or 0 for n in ast.walk(tree)), default=0)
    found.blocks[MODULE] = Block(MODULE, _digest(_module_level(tree)), 1, max(last_line, 1))
    return found


def _collect(node: ast.AST, prefix: str, out: list[tuple[str, Function]]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            qualname = f"{prefix}{child.name}"
            out.append((qualname, child))
            _collect(child, f"{qualname}.<locals>.", out)
        elif isinstance(child, ast.ClassDef):
            _collect(child, f"{prefix}{child.name}.", out)
        else:
            _collect(child, prefix, out)


def _checksum(node: ast.AST) -> str:
    """A digest of ``node``'s syntax, docstrings left out (positions are not part of it)."""
    return _digest(copy.deepcopy(node))


def _digest(bare: ast.AST) -> str:
    """``_checksum`` of a node of the caller's own: its docstrings are taken out in place."""
    _drop_docstrings(bare)
    text = ast.dump(bare, annotate_fields=False, include_attributes=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _drop_docstrings(bare: ast.AST) -> None:
    for each in ast.walk(bare):
        body = getattr(each, "body", None)
        if (
            isinstance(each, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and isinstance(body, list)
            and body
            and _is_docstring(body[0])
        ):
            each.body = body[1:] or [ast.Pass()]


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _module_level(tree: ast.Module) -> ast.Module:
    """A copy of the module as it runs at import: a ``def`` runs its decorators and defaults,
    never its body, and a plain one (neither) only binds a name, so adding or removing it is no
    change of import-time code (the tests that ran a removed function are selected by its
    block)."""
    bare = copy.deepcopy(tree)
    for each in ast.walk(bare):
        body = getattr(each, "body", None)
        if isinstance(body, list):
            kept = [s for s in body if not _plain_def(s)]
            setattr(each, "body", kept or [ast.Pass()])  # noqa: B010 - any node with a body
        if isinstance(each, ast.FunctionDef | ast.AsyncFunctionDef):
            each.body = [ast.Pass()]
    return bare


def _plain_def(statement: ast.stmt) -> bool:
    if not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    arguments = statement.args
    return (
        not statement.decorator_list
        and not arguments.defaults
        and not any(default is not None for default in arguments.kw_defaults)
    )
