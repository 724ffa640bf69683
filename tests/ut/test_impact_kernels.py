"""Kernels in the impact map: a source's checksum ignores what does not compile, a test that
launched a kernel holds a block per source, a source outside the checkout is left out, a
kernel source change selects the launching tests with the kernel named, and the simulated
card names each kernel's own file (so one kernel's change is not every device test's)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simpler import runner
from simpler.impact.kernel_sources import add_kernels, source_checksum
from simpler.impact.map import ImpactMap
from simpler.impact.select import select_tests
from simpler.runner import library
from simpler.runner.kernels import KERNELS

SOURCE = "inline void twice(const double* x, double* out) {\n    out[0] = 2 * x[0];\n}\n"
A, B, PURE = "tests/test_k.py::test_a", "tests/test_k.py::test_b", "tests/test_k.py::test_pure"


def test_a_source_checksum_ignores_blank_lines_line_comments_and_indentation() -> None:
    noted = "// twice: out = 2x\n\n" + SOURCE.replace("    out", "  out") + "// end\n"
    assert source_checksum(noted) == source_checksum(SOURCE)
    assert source_checksum(SOURCE.replace("2 * x", "3 * x")) != source_checksum(SOURCE)


def _project(tmp_path: Path) -> tuple[Path, ImpactMap]:
    root = tmp_path / "project"
    (root / "kernels").mkdir(parents=True)
    (root / "kernels" / "twice.h").write_text(SOURCE)
    (root / "kernels" / "fill.h").write_text("inline void fill() {}\n")
    outside = tmp_path / "installed" / "plan.h"
    outside.parent.mkdir()
    outside.write_text("struct Plan {};\n")
    impact = ImpactMap(tests={PURE: set()})
    add_kernels(
        impact,
        {
            A: {"twice": (str(root / "kernels" / "twice.h"), str(outside))},
            B: {"fill": (str(root / "kernels" / "fill.h"),)},
        },
        root,
    )
    return root, impact


def test_each_launched_kernel_is_a_block_of_each_source_inside_the_checkout(
    tmp_path: Path,
) -> None:
    _, impact = _project(tmp_path)
    assert impact.tests == {
        PURE: set(),
        A: {("kernels/twice.h", "kernel twice")},
        B: {("kernels/fill.h", "kernel fill")},
    }
    assert impact.checksums[("kernels/twice.h", "kernel twice")] == source_checksum(SOURCE)


def test_a_kernel_source_change_selects_the_tests_that_launched_that_kernel(
    tmp_path: Path,
) -> None:
    _, impact = _project(tmp_path)
    changed = {"kernels/twice.h": SOURCE.replace("2 * x", "x[0] + x")}
    decision = select_tests(impact, changed, [A, B, PURE])
    assert decision.run_all is None
    assert decision.selected == {A: ["launched kernel twice (kernels/twice.h changed)"]}
    deleted = select_tests(impact, {"kernels/fill.h": None}, [A, B, PURE])
    assert deleted.selected == {B: ["launched kernel fill (kernels/fill.h changed)"]}


def test_c_plus_plus_no_kernel_names_selects_everything_and_says_so(tmp_path: Path) -> None:
    _, impact = _project(tmp_path)
    decision = select_tests(impact, {"kernels/card.cpp": "int x;\n"}, [A, B, PURE])
    assert decision.run_all == (
        "kernels/card.cpp changed: C/C++ that no kernel in the map was built from"
    )
    assert sorted(decision.selected) == [A, B, PURE]


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_the_simulated_card_names_each_kernels_own_sources(kernel: str) -> None:
    card = runner.open_runner("a5sim", 0)
    card.init()
    try:
        runner.set_test_context("tests/test_k.py::test_one", 1)
        arguments = {
            "vector_add": (np.ones(2, np.float32), np.ones(2, np.float32)),
            "scale": (np.ones(2, np.float32), 2.0),
            "matmul": (np.ones((1, 1), np.float32), np.ones((1, 1), np.float32)),
            "softmax": (np.ones(2, np.float32),),
        }
        if kernel != "spin":  # spin runs until the op-timeout reaps it: no launch to make
            card.run(kernel, *arguments.get(kernel, ()))
            sources = runner.launched_kernels()[kernel]
        else:
            sources = library.load("a5sim").kernel_sources("a5sim", "spin")
    finally:
        runner.set_test_context("", 1)
        card.close()
    names = sorted(Path(source).relative_to(Path(runner.__file__).parent).as_posix()
                   for source in sources)  # fmt: skip
    own = {"vector_add": "elementwise", "scale": "elementwise"}.get(kernel, kernel)
    shared = ["simkernels.h", "simkernels/plan.h"]
    expected = shared if kernel in ("noop", "spin") else sorted([f"simkernels/{own}.h", *shared])
    assert names == expected
    assert all(Path(source).is_file() for source in sources)
    assert runner.launched_kernels() == {}  # the next test starts with none


def test_a_projects_runner_says_its_launches_through_note_launch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runner.set_test_context("tests/test_k.py::test_own", 1)
    try:
        runner.note_launch("gemm", ["kernels/gemm.cce"])
        runner.note_launch("gemm", ["kernels/common.h", "kernels/gemm.cce"])
        runner.note_launch("relu")
        assert runner.launched_kernels() == {
            "gemm": (str(tmp_path / "kernels/gemm.cce"), str(tmp_path / "kernels/common.h")),
            "relu": (),
        }
        with pytest.raises(TypeError, match="kernel must be a non-empty str"):
            runner.note_launch("")
    finally:
        runner.set_test_context("", 1)
    assert runner.launched_kernels() == {}
