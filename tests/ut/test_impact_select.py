"""Selection from the impact map: a changed body selects exactly the tests that ran it, each
with its reason; a test file, a conftest over it and a new test select by path; what the map
cannot see runs everything and names the rule; a change of non-code files selects nothing."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from simpler.impact.blocks import MODULE, blocks_of
from simpler.impact.map import ImpactMap
from simpler.impact.select import Rules, select_tests

CODE = textwrap.dedent("""
    LIMIT = 3


    def shared(x):
        return x * 2


    def only_a():
        return shared(1)


    def only_b():
        return shared(2)
    """)
A, B, C = "tests/test_x.py::test_a", "tests/test_x.py::test_b", "tests/sub/test_y.py::test_c"
SUITE = [A, B, C]
RULES = Rules(non_code=("docs/**", "*.md"), run_all=("pyproject.toml",))


def _map() -> ImpactMap:
    checksums = {("pkg/code.py", n): b.checksum for n, b in blocks_of(CODE).blocks.items()}
    tests = {
        A: {("pkg/code.py", "only_a"), ("pkg/code.py", "shared")},
        B: {("pkg/code.py", "only_b"), ("pkg/code.py", "shared")},
        C: set(),
    }
    return ImpactMap(checksums=checksums, tests=tests)


def test_a_changed_body_selects_exactly_the_tests_that_ran_it_with_the_reason() -> None:
    changed = {"pkg/code.py": CODE.replace("return shared(1)", "return shared(3)")}
    decision = select_tests(_map(), changed, SUITE, RULES)
    assert decision.selected == {A: ["ran changed block pkg/code.py::only_a"]}
    assert decision.left_out == [B, C] and decision.run_all is None


def test_a_shared_function_changed_selects_every_test_that_ran_it() -> None:
    changed = {"pkg/code.py": CODE.replace("return x * 2", "return x * 3")}
    assert sorted(select_tests(_map(), changed, SUITE, RULES).selected) == [A, B]


def test_a_comment_or_a_docstring_selects_nothing() -> None:
    changed = {"pkg/code.py": CODE.replace("def only_b():", 'def only_b():\n    """Doc."""  # x')}
    decision = select_tests(_map(), changed, SUITE, RULES)
    assert decision.selected == {} and decision.left_out == SUITE


def test_a_vanished_block_selects_the_tests_that_ran_it() -> None:
    changed = {"pkg/code.py": CODE.split("def only_b")[0]}
    assert list(select_tests(_map(), changed, SUITE, RULES).selected) == [B]


def test_test_files_conftests_over_them_and_new_tests_select_by_path() -> None:
    new = "tests/sub/test_y.py::test_new"
    changed = {"tests/sub/test_y.py": "x = 1\n", "tests/sub/conftest.py": ""}
    decision = select_tests(_map(), changed, [*SUITE, new], RULES)
    assert decision.selected == {
        C: ["its file tests/sub/test_y.py changed", "tests/sub/conftest.py on its path changed"],
        new: ["its file tests/sub/test_y.py changed", "tests/sub/conftest.py on its path changed",
              "new test (not in the map)"],
    }  # fmt: skip
    root = select_tests(_map(), {"conftest.py": ""}, SUITE, RULES)
    assert sorted(root.selected) == sorted(SUITE)


def test_a_change_of_non_code_files_alone_selects_nothing_and_says_which() -> None:
    decision = select_tests(_map(), {"docs/x.md": "", "README.md": ""}, SUITE, RULES)
    assert decision.selected == {} and decision.non_code == ["README.md", "docs/x.md"]


@pytest.mark.parametrize(
    ("changes", "rule"),
    [
        ({"pyproject.toml": ""}, "pyproject.toml is a run_all path"),
        ({"runner/card.cpp": "int x;"},
         "runner/card.cpp changed: C/C++ that no kernel in the map was built from"),
        ({"pkg/code.py": CODE.replace("LIMIT = 3", "LIMIT = 4")},
         "pkg/code.py changed import-time code the map cannot attribute"),
        ({"pkg/code.py": "def broken(:\n"},
         "pkg/code.py changed import-time code the map cannot attribute"),
    ],
)  # fmt: skip
def test_what_the_map_cannot_see_runs_everything_and_names_the_rule(
    changes: dict[str, str], rule: str
) -> None:
    decision = select_tests(_map(), changes, SUITE, RULES)
    assert decision.run_all == rule
    assert decision.selected == {nodeid: [rule] for nodeid in SUITE}


def test_the_module_block_is_a_block_of_its_own() -> None:
    assert ("pkg/code.py", MODULE) in _map().checksums


def test_standing_reasons_select_a_test_whatever_changed() -> None:
    """An unskippable test, or one the history saw fail lately, runs on a docs-only change."""
    standing = {C: ["unskippable"], A: ["flaky in 1 of the last 20 runs"]}
    decision = select_tests(_map(), {"docs/x.md": ""}, SUITE, RULES, standing)
    assert decision.selected == standing and decision.left_out == [B]


PLATFORMS = Rules(non_code=("docs/**",), platforms={"a5sim": ("src/a5/**",),
                                                     "a2a3sim": ("src/a2a3/**",)})  # fmt: skip


def test_a_change_under_another_platforms_tree_selects_nothing_on_this_one() -> None:
    """As a device project's workflow skips the a2a3 jobs on a change only under its a5 tree."""
    change = {"src/a5/kernel.cpp": "int x;"}
    on_a2a3 = select_tests(_map(), change, SUITE, PLATFORMS, platform="a2a3sim")
    assert on_a2a3.selected == {} and on_a2a3.other_platforms == ["src/a5/kernel.cpp"]
    on_a5 = select_tests(_map(), change, SUITE, PLATFORMS, platform="a5sim")
    assert (
        on_a5.run_all == "src/a5/kernel.cpp changed: C/C++ that no kernel in the map was built from"
    )


HELPERS = textwrap.dedent("""
    CASES = [1, 2]


    def helper():
        return 1


    def test_helpers_own():
        assert helper() == 1
    """)
OWN, USER = "tests/test_helpers.py::test_helpers_own", "tests/test_user.py::test_uses_helper"


def _helper_map() -> ImpactMap:
    file = "tests/test_helpers.py"
    checksums = {(file, n): b.checksum for n, b in blocks_of(HELPERS).blocks.items()}
    tests = {OWN: {(file, "test_helpers_own"), (file, "helper")}, USER: {(file, "helper")}}
    return ImpactMap(checksums=checksums, tests=tests)


def test_a_helper_in_a_test_file_selects_every_test_that_ran_it() -> None:
    changed = {"tests/test_helpers.py": HELPERS.replace("return 1", "return 2")}
    decision = select_tests(_helper_map(), changed, [OWN, USER], RULES, imports={})
    assert decision.selected == {
        OWN: ["its file tests/test_helpers.py changed",
              "ran changed block tests/test_helpers.py::helper"],
        USER: ["ran changed block tests/test_helpers.py::helper"],
    }  # fmt: skip


def test_a_test_files_import_time_change_fails_closed_only_where_another_file_imports_it() -> None:
    changed = {"tests/test_helpers.py": HELPERS.replace("[1, 2]", "[1, 2, 3]")}
    alone = {"tests/test_helpers.py": frozenset({"pytest"}), "tests/test_user.py": frozenset()}
    decision = select_tests(_helper_map(), changed, [OWN, USER], RULES, imports=alone)
    assert decision.run_all is None and list(decision.selected) == [OWN]
    imported = {**alone, "tests/test_user.py": frozenset({"test_helpers", "CASES"})}
    decision = select_tests(_helper_map(), changed, [OWN, USER], RULES, imports=imported)
    assert decision.run_all == (
        "tests/test_helpers.py changed import-time code the map cannot attribute"
    )
    unknown = select_tests(_helper_map(), changed, [OWN, USER], RULES)
    assert unknown.run_all is not None  # who imports it unknown: closed


def test_a_test_file_outside_the_suite_as_collected_selects_nothing() -> None:
    changed = {"tests/it/test_elsewhere.py": "def test_x():\n    pass\n"}
    decision = select_tests(_helper_map(), changed, [OWN, USER], RULES, imports={})
    assert decision.run_all is None and decision.selected == {}


def test_the_suites_imports_are_read_from_its_files(tmp_path: Path) -> None:
    from simpler.impact.test_imports import imported_names, imports_module

    (tmp_path / "test_user.py").write_text(
        "from test_helpers import (\n    CASES,  # the table\n)\nimport os.path as p\n"
    )
    (tmp_path / "test_helpers.py").write_text("import pytest\n")
    found = imported_names(tmp_path, ["test_user.py", "test_helpers.py", "missing.py"])
    assert found["test_user.py"] >= {"test_helpers", "CASES", "os", "path"}
    assert imports_module("tests/test_helpers.py", found)
    assert not imports_module("test_user.py", found)


def test_the_suites_imports_are_read_only_when_asked(tmp_path: Path) -> None:
    from simpler.impact.test_imports import SuiteImports

    imports = SuiteImports(tmp_path, ["test_user.py"])
    (tmp_path / "test_user.py").write_text("import test_helpers\n")  # after: nothing read yet
    assert dict(imports) == {"test_user.py": frozenset({"test_helpers"})}
