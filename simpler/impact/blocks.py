"""A Python file's code blocks, the unit the impact map records a test against.

A block is one function or method (a nested one is also a block of its own), or the file's
module-level code: what runs at import. Its checksum is of its syntax tree: comments, blank
lines, formatting and docstrings do not change it (docs/affected.md, "The map").
``blocks_of(source)`` gives the blocks and the innermost block of each line.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass, field

__all__ = ["MODULE", "Block", "FileBlocks", "blocks_of", "is_docstring"]

MODULE = "<module>"  # the qualified name of a file's module-level block
Function = ast.FunctionDef | ast.AsyncFunctionDef
DOCSTRING_HOLDERS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
# The fields that hold statements (a match's cases and a try's handlers hold them in turn).
STATEMENT_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")
PASS = ast.Pass()


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

    @classmethod
    def of(cls, blocks: list[Block]) -> FileBlocks:
        """The file of ``blocks``, outer functions before the ones inside them (as
        :func:`blocks_of` finds them): an inner function's lines are its own."""
        found = cls()
        for block in blocks:
            found.blocks[block.qualname] = block
            if block.qualname != MODULE:
                for line in range(block.first_line, block.last_line + 1):
                    found._by_line[line] = block.qualname
        return found


def blocks_of(source: str) -> FileBlocks:
    """The blocks of ``source``; SyntaxError when it is not Python."""
    tree = ast.parse(source)
    functions: list[tuple[str, Function]] = []
    _collect(tree, "", functions)
    found = []
    for qualname, node in functions:
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        last = node.end_lineno or node.lineno
        found.append(Block(qualname, _digest(node, at_import=False), first, last))
    last_line = max((s.end_lineno or s.lineno for s in tree.body), default=1)
    found.append(Block(MODULE, _digest(tree, at_import=True), 1, max(last_line, 1)))
    return FileBlocks.of(found)


def _collect(node: ast.AST, prefix: str, out: list[tuple[str, Function]]) -> None:
    # A def is a statement: only lists of statements are searched, never an expression.
    for holder in STATEMENT_FIELDS:
        children = getattr(node, holder, None)
        if not isinstance(children, list):
            continue
        for child in children:
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                qualname = f"{prefix}{child.name}"
                out.append((qualname, child))
                _collect(child, f"{qualname}.<locals>.", out)
            elif isinstance(child, ast.ClassDef):
                _collect(child, f"{prefix}{child.name}.", out)
            else:
                _collect(child, prefix, out)


def _digest(node: ast.AST, *, at_import: bool) -> str:
    """A digest of ``node``'s syntax (positions are not part of it), docstrings left out.
    ``at_import``: of what runs when the module is imported (see :func:`_import_time_body`).
    The tree is read, never copied: copying every function's tree was most of a map's cost."""
    out: list[str] = []
    _write(node, out, at_import)
    # A separator no repr() holds bare: two trees never write the same text.
    return hashlib.sha256("\x1f".join(out).encode()).hexdigest()[:16]


def _write(node: ast.AST, out: list[str], at_import: bool) -> None:
    append = out.append
    append(type(node).__name__)
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, list):
            if name == "body":
                value = _body(node, value, at_import)
            append("[")
            for item in value:
                if isinstance(item, ast.AST):
                    _write(item, out, at_import)
                else:
                    append(repr(item))
            append("]")
        elif isinstance(value, ast.AST):
            _write(value, out, at_import)
        else:
            append(repr(value))
    append(")")


def _body(node: ast.AST, body: list[ast.stmt], at_import: bool) -> list[ast.stmt]:
    if isinstance(node, DOCSTRING_HOLDERS) and body and is_docstring(body[0]):
        body = body[1:]
    if at_import:
        body = _import_time_body(node, body)
    return body or [PASS]  # an emptied body reads as ``pass``, as the source must say


def _import_time_body(node: ast.AST, body: list[ast.stmt]) -> list[ast.stmt]:
    """What of a body runs at import: a ``def`` runs its decorators and defaults, never its
    body, and a plain one (neither) only binds a name, so adding or removing it is no change
    of import-time code (the tests that ran a removed function are selected by its block)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return []
    return [statement for statement in body if not _plain_def(statement)]


def is_docstring(statement: ast.stmt) -> bool:
    """A string standing alone as a statement: Python's docstring, when it comes first."""
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _plain_def(statement: ast.stmt) -> bool:
    """A ``def`` whose import does nothing but bind its name: no decorator, and only literal
    defaults (``None``, ``0``, ``()``, ``"x"``: evaluating one has no effect). Its defaults
    are its own block's: a test that ran the function sees them change."""
    if not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    arguments = statement.args
    defaults = [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]
    return not statement.decorator_list and all(_literal(default) for default in defaults)


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True
