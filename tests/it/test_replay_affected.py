"""scripts/replay_affected.py on a tiny project of three commits: the second changes one
function (the selection runs its one test, a mutant in it is caught), the third breaks
another (a new failure, which the selection ran); safety 100%."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from calc_project import CALC_PACKAGE
from processes import ROOT, simpler_env

FILES = {
    **CALC_PACKAGE,
    "tests/test_calc.py": """
        from pkg.calc import double, triple


        def test_double():
            assert double(2) == 4


        def test_triple():
            assert triple(2) == 6
        """,
}
DOUBLE, TRIPLE = "tests/test_calc.py::test_double", "tests/test_calc.py::test_triple"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)


def _commit(root: Path, message: str) -> None:
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)


def _edit(root: Path, old: str, new: str) -> None:
    calc = root / "pkg" / "calc.py"
    calc.write_text(calc.read_text().replace(old, new))


def _project(root: Path) -> None:
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    _git(root, "init", "-q", "-b", "main")
    _commit(root, "first")
    _edit(root, "return x * 3", "return x + x + x")
    _commit(root, "triple adds")
    _edit(root, "return x * 2", "return x * 2 + 1")
    _commit(root, "double breaks")


def _replay(root: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    document = root.parent / "replay.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "replay_affected.py"), "--repo", str(root),
         "--simpler", "self", "--json", str(document), *args, "--", "tests"],
        capture_output=True, text=True, timeout=600, env=simpler_env(),
    )  # fmt: skip
    figures = json.loads(document.read_text()) if document.exists() else {}
    return done, figures


def test_the_replay_finds_the_new_failure_selected_and_the_mutant_caught(tmp_path: Path) -> None:
    root = tmp_path / "project"
    _project(root)
    done, figures = _replay(root, "--commits", "2", "--mutants", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    triple_adds, double_breaks = figures["commits"]
    assert (triple_adds["subject"], triple_adds["selected"], triple_adds["total"]) == (
        "triple adds", 1, 2
    )  # fmt: skip
    (mutant,) = triple_adds["mutants"]
    assert mutant["target"] == "pkg/calc.py::triple" and mutant["killed"] == [TRIPLE]
    assert mutant["missed"] == [] and mutant["missed_alone"] == []
    assert double_breaks["new_failures"] == [DOUBLE] and double_breaks["new_failures_missed"] == []
    assert (figures["safety"], figures["mutants_caught"], figures["new_failures"]) == (1.0, 1, 1)
    assert "safety 100%: 1 of 1 new failure(s) selected, 1 of 1 killed mutant(s) caught" in (
        done.stdout
    )
    assert (
        "  mutant pkg/calc.py::triple: killed 1; selected 1 since the parent, 1 alone: caught"
        in (done.stdout)
    )
    assert subprocess.run(["git", "worktree", "list"], cwd=root, capture_output=True, text=True,
                          check=True).stdout.count("\n") == 1  # fmt: skip


def test_a_usage_error_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done, _ = _replay(tmp_path, "--commits", "0")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
