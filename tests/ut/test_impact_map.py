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


PROBE = """
import sys
from coverage import Coverage

cov = Coverage.current()
import shared_mod

cov.switch_context("t.py::a|run"); shared_mod.shared(1)
cov.switch_context("t.py::b|run"); shared_mod.shared(2)
cov.switch_context("")
cov.save()
data = cov.get_data()
measured = [p for p in data.measured_files() if p.endswith("shared_mod.py")]
print(sorted({c for cs in data.contexts_by_lineno(measured[0]).values() for c in cs if c}))
"""


def _measured_process_config(tmp_path: Path) -> str:
    from simpler.coverage.options import CovOptions
    from simpler.coverage.process_env import RunCoverage

    options = CovOptions(enabled=True, sources=(str(tmp_path),), context="test")
    return RunCoverage(options, tmp_path / "data").child("L2_pass").config


def test_a_run_with_test_contexts_measures_with_the_c_tracer(tmp_path: Path) -> None:
    """sys.monitoring keeps the first context that reaches a line (coveragepy #2200): a map
    built on it would give a shared line to one test only."""
    import base64
    import json

    config = json.loads(base64.b64decode(_measured_process_config(tmp_path)))
    assert config["core"] == "ctrace"


@pytest.mark.skipif(sys.version_info < (3, 12), reason="sys.monitoring exists from Python 3.12")
def test_a_shared_line_names_both_tests_even_where_sys_monitoring_is_asked_for(
    tmp_path: Path,
) -> None:
    import os
    import subprocess

    (tmp_path / "shared_mod.py").write_text("def shared(x):\n    return x * 2\n")
    (tmp_path / "data").mkdir()
    env = {**os.environ, "COVERAGE_CORE": "sysmon",
           "COVERAGE_PROCESS_CONFIG": _measured_process_config(tmp_path)}  # fmt: skip
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert done.stdout.strip() == "['t.py::a|run', 't.py::b|run']", done.stdout + done.stderr


def test_a_map_built_in_a_child_beside_the_report_is_the_map(
    measured: ImpactMap, tmp_path: Path
) -> None:
    from contextlib import closing

    from simpler.history.store import open_store
    from simpler.impact.map_child import MapChild, measured_files
    from simpler.impact.run_map import MapTarget
    from simpler.impact.store import Environment, load_map

    commit = "1" * 40
    target = MapTarget(str(tmp_path / "h.db"), commit, tmp_path, tmp_path / "impact" / "r.json")
    files = measured_files([tmp_path / ".coverage"])
    assert files == {str(tmp_path / "pkg" / "code.py")}
    child = MapChild(target, {}, files)
    child.combined(tmp_path / ".coverage")
    line = child.line()
    assert line.startswith("impact map of 1111111111: 2 tests, 5 blocks in 1 files"), line
    with closing(open_store(str(tmp_path / "h.db"))) as conn:
        assert load_map(conn, commit, Environment.here()) == measured
    assert (tmp_path / "impact" / "r.json").is_file()


def test_a_map_the_child_could_not_keep_is_one_line_of_why(tmp_path: Path) -> None:
    from simpler.impact.map_child import MapChild
    from simpler.impact.run_map import MapTarget

    (tmp_path / "h.db").mkdir()  # a folder where the history's file would be
    target = MapTarget(str(tmp_path / "h.db"), "1" * 40, tmp_path, tmp_path / "r.json")
    child = MapChild(target, {}, [])
    child.combined(tmp_path / "no-such-data")
    with pytest.raises(RuntimeError) as caught:
        child.line()
    assert str(caught.value).startswith("cannot open history database ")
    untold = MapChild(target, {}, [])
    with pytest.raises(RuntimeError, match=r"^the run measured nothing$"):
        untold.line()
