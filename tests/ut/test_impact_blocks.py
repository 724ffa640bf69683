"""A file's blocks for the impact map: a function's checksum follows what it does and ignores
comments, blank lines and docstrings; each line belongs to its innermost function, else to
the module's import-time code."""

from __future__ import annotations

import textwrap

from simpler.impact.blocks import MODULE, blocks_of

SOURCE = textwrap.dedent('''
    """The module's docstring."""
    import os

    LIMIT = 3


    def plain(x):
        """A docstring."""
        return x + 1  # a comment


    class Shape:
        sides = 4

        @staticmethod
        def area(a):
            def inner(b):
                return b * b
            return inner(a)


    async def fetch():
        return os.getcwd()
    ''')


def _checksums(source: str) -> dict[str, str]:
    return {name: block.checksum for name, block in blocks_of(source).blocks.items()}


def test_every_function_method_and_the_module_is_a_block_named_as_python_names_it() -> None:
    found = blocks_of(SOURCE)
    assert sorted(found.blocks) == sorted(
        [MODULE, "plain", "Shape.area", "Shape.area.<locals>.inner", "fetch"]
    )


def test_each_line_belongs_to_its_innermost_function_else_to_the_module() -> None:
    found = blocks_of(SOURCE)
    lines = SOURCE.splitlines()

    def line_of(text: str) -> int:
        return next(i for i, line in enumerate(lines, start=1) if text in line)

    assert found.block_at(line_of("return x + 1")) == "plain"
    assert found.block_at(line_of("return b * b")) == "Shape.area.<locals>.inner"
    assert found.block_at(line_of("return inner(a)")) == "Shape.area"
    assert found.block_at(line_of("@staticmethod")) == "Shape.area"
    assert found.block_at(line_of("sides = 4")) == MODULE
    assert found.block_at(line_of("LIMIT = 3")) == MODULE


def test_comments_blank_lines_formatting_and_docstrings_change_no_checksum() -> None:
    reworded = (
        SOURCE.replace('"""A docstring."""', '"""Another docstring, longer."""')
        .replace("# a comment", "# another comment")
        .replace("LIMIT = 3", "LIMIT = (\n    3\n)\n\n\n# a note")
        .replace('"""The module\'s docstring."""', "")
    )
    assert _checksums(reworded) == _checksums(SOURCE)


def test_a_body_change_changes_its_function_and_those_around_it_not_the_module() -> None:
    before = _checksums(SOURCE)
    after = _checksums(SOURCE.replace("return b * b", "return b * b * b"))
    changed = {name for name in before if before[name] != after[name]}
    assert changed == {"Shape.area.<locals>.inner", "Shape.area"}


def test_import_time_code_changes_the_module_block() -> None:
    before = _checksums(SOURCE)
    edits = [("LIMIT = 3", "LIMIT = 4"), ("sides = 4", "sides = 5"),
             ("def plain(x):", "def plain(x=LIMIT):"),
             ("@staticmethod", "@classmethod")]  # fmt: skip
    for edit in edits:
        after = _checksums(SOURCE.replace(*edit))
        assert after[MODULE] != before[MODULE], edit


def test_a_plain_def_added_or_removed_is_no_change_of_import_time_code() -> None:
    """It only binds a name: the tests of a removed function are selected by its own block,
    and a new one no test ran yet. A decorated one runs its decorator at import."""
    before = _checksums(SOURCE)[MODULE]
    assert _checksums(SOURCE + "\n\ndef added(y):\n    return y\n")[MODULE] == before
    assert _checksums(SOURCE.replace("async def fetch", "async def renamed"))[MODULE] == before
    assert _checksums(SOURCE + "\n\n@cache\ndef added(y):\n    return y\n")[MODULE] != before


def test_a_literal_default_is_the_functions_own_not_import_time_code() -> None:
    """Evaluating ``None``, ``()`` or ``-1`` at import has no effect: a function with such
    defaults, added or changed, is a change of its own block; a default that names something
    (looked up at import) is import-time code."""
    before = _checksums(SOURCE)
    literal = SOURCE.replace("def plain(x):", "def plain(x, ys=(), *, n=-1, tag=None):")
    assert _checksums(literal)[MODULE] == before[MODULE]
    assert _checksums(literal)["plain"] != before["plain"]
    added = SOURCE + "\n\ndef added(y, z=[1, 2]):\n    return y\n"
    assert _checksums(added)[MODULE] == before[MODULE]
    named = SOURCE + "\n\ndef added(y, z=LIMIT):\n    return y\n"
    assert _checksums(named)[MODULE] != before[MODULE]


def test_a_def_under_any_statement_is_found() -> None:
    source = textwrap.dedent("""
        import sys

        try:
            def in_try(): return 1
        except ImportError:
            def in_except(): return 2
        else:
            def in_else(): return 3
        finally:
            def in_finally(): return 4
        if sys:
            with open(__file__) as f:
                for _ in ():
                    pass
                else:
                    def in_for_else(): return 5
        match sys.platform:
            case "linux":
                class InCase:
                    def method(self): return 6
        """)
    assert set(blocks_of(source).blocks) == {
        MODULE,
        "in_try",
        "in_except",
        "in_else",
        "in_finally",
        "in_for_else",
        "InCase.method",
    }
