"""The impact map from real coverage data with per-test contexts: a test holds each block it
ran a line of, a line two tests ran gives the block to both, code run outside any test and
files outside the checkout belong to no test."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from simpler.impact.blocks import MODULE
from simpler.impact.map import ImpactMap, build_map, nodeid_of_context

CODE = textwrap.dedent("""
    def shared(x):
        return x * 2


    def only_a():
        return shared(1)


    class Box:
        def only_b(self):
            return shared(2)


    def never():
        return 0
    """)


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"impact_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def measured(tmp_path: Path) -> ImpactMap:
    coverage = pytest.importorskip("coverage")
    source = tmp_path / "pkg" / "code.py"
    source.parent.mkdir()
    source.write_text(CODE)
    cov = coverage.Coverage(data_file=str(tmp_path / ".coverage"), source=[str(tmp_path)],
                            timid=False)  # fmt: skip
    previous = sys.gettrace()
    cov.start()
    try:
        module = _load(source)  # import-time code: the empty context
        cov.switch_context("tests/test_code.py::test_a|run")
        module.only_a()
        cov.switch_context("tests/test_code.py::test_b|attempt 2")
        module.Box().only_b()
        cov.switch_context("")
    finally:
        cov.stop()
        sys.settrace(previous)
    cov.save()
    data = cov.get_data()
    try:
        return build_map(data, tmp_path)
    finally:
        data.close()  # Python 3.13 warns of an SQLite connection left to the collector


def test_each_test_holds_the_blocks_it_ran_and_a_shared_line_names_both(
    measured: ImpactMap,
) -> None:
    code = "pkg/code.py"
    assert measured.tests == {
        "tests/test_code.py::test_a": {(code, "only_a"), (code, "shared")},
        "tests/test_code.py::test_b": {(code, "Box.only_b"), (code, "shared")},
    }
    assert set(measured.checksums) == {
        (code, name) for name in (MODULE, "shared", "only_a", "Box.only_b", "never")
    }


@pytest.mark.parametrize(
    ("context", "nodeid"),
    [("t.py::a|run", "t.py::a"), ("t.py::a[x|y]|attempt 3", "t.py::a[x|y]"), ("", None),
     ("no bar", None)],
)  # fmt: skip
def test_a_context_names_its_test(context: str, nodeid: str | None) -> None:
    assert nodeid_of_context(context) == nodeid
