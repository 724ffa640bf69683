"""Per-test selection's speed: ``simpler affected``'s decision (git's merge-base and diff, the
map read from the history, every test's reasons) on a map of 10,000 tests of 60 blocks each
over 2,000 source files, with 20 files changed, against one second.

``python scripts/bench_affected.py [REPEATS]`` prints the figure ``affected_figures`` hands
to ``nox -s bench``. The map is synthetic (each test ran 60 blocks drawn from the files, a
fixed seed), its checksums the files' own, so the changed files' blocks compare as a real
selection's would.
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

from bench import Figure

from simpler.history.store import open_store
from simpler.impact.affected import decide
from simpler.impact.blocks import blocks_of
from simpler.impact.map import BlockKey, ImpactMap
from simpler.impact.select import Rules
from simpler.impact.store import Environment, save_map

__all__ = ["affected_figures", "replay_figures"]

TESTS, BLOCKS_PER_TEST, FILES, FUNCTIONS, CHANGED = 10_000, 60, 2_000, 60, 20
SECONDS_GOAL = 1.0


def _source(index: int, changed: bool = False) -> str:
    body = "".join(
        f"def f{n}(x):\n    return x + {n + (1 if changed and n == 0 else 0)}\n\n\n"
        for n in range(FUNCTIONS)
    )
    return f'"""Module {index}."""\n\n\n{body}'


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _project(root: Path) -> tuple[str, ImpactMap, list[str]]:
    root.mkdir()
    for index in range(FILES):
        (root / f"m{index:04d}.py").write_text(_source(index))
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "map")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    impact = ImpactMap()
    keys: list[BlockKey] = []
    for index in range(FILES):
        name = f"m{index:04d}.py"
        for qualname, block in blocks_of(_source(index)).blocks.items():
            impact.checksums[(name, qualname)] = block.checksum
            keys.append((name, qualname))
    chooser = random.Random(7)
    tests = [f"tests/test_{t // 10:04d}.py::test_{t % 10}" for t in range(TESTS)]
    for nodeid in tests:
        impact.tests[nodeid] = set(chooser.sample(keys, BLOCKS_PER_TEST))
    return head, impact, tests


def affected_figures(repeats: int) -> list[Figure]:
    with tempfile.TemporaryDirectory(prefix="simpler-bench-affected-") as folder:
        root = Path(folder) / "project"
        head, impact, tests = _project(root)
        history = str(Path(folder) / "history.db")
        with closing(open_store(history)) as conn:
            save_map(conn, head, Environment.here(), impact)
        for index in range(0, FILES, FILES // CHANGED):  # one function body in each of 20
            (root / f"m{index:04d}.py").write_text(_source(index, changed=True))
        seconds, selected = [], 0
        for _ in range(repeats + 1):  # the first warms the page cache and git's index
            started = time.perf_counter()
            affected = decide(root, "HEAD", history, tests, Rules(), 50)
            seconds.append(time.perf_counter() - started)
            selected = len(affected.decision.selected)
        if affected.decision.run_all is not None:
            raise RuntimeError(f"the selection failed closed: {affected.decision.run_all}")
    median = statistics.median(seconds[1:])
    return [
        Figure(
            f"affected: a selection on a map of {TESTS:,} tests in {SECONDS_GOAL:g} s",
            median / SECONDS_GOAL,
            f"{SECONDS_GOAL:g} second",
            f"{median:.3f}s (median of {repeats}): {TESTS:,} tests x {BLOCKS_PER_TEST} blocks "
            f"over {FILES:,} files, {CHANGED} files changed, git's diff included; "
            f"{selected:,} tests selected",
            1.0,
        )
    ]


if __name__ == "__main__":
    for figure in affected_figures(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        print(f"{figure.name}: {figure.ratio:.3f} (goal {figure.goal}) {figure.detail}")


REPLAY_COMMITS, REPLAY_MUTANTS = 4, 1
TIME_SHARE_GOAL = 0.3


def replay_figures(_repeats: int) -> list[Figure]:
    """``scripts/replay_affected.py`` over this repository's last few commits (its sample of
    the unit tests, each commit's own simpler): the share of new failures and killed mutants
    the selection missed (goal: none), and the selected share of the suite's time at the
    median over the Python-only commits. Once: a replay is minutes, not a timing."""
    with tempfile.TemporaryDirectory(prefix="simpler-bench-replay-") as folder:
        out = Path(folder) / "replay.json"
        script = Path(__file__).resolve().parent / "replay_affected.py"
        command = [sys.executable, str(script), "--commits", str(REPLAY_COMMITS),
                   "--mutants", str(REPLAY_MUTANTS), "--json", str(out)]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode not in (0, 1):
            raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr}")
        replayed = json.loads(out.read_text(encoding="utf-8"))
    share = replayed["median_time_share_python_only"]
    commits = len(replayed["commits"])
    return [
        Figure(
            f"replay of the last {REPLAY_COMMITS} commits: missed",
            1.0 - float(replayed["safety"]),
            "every new failure and killed mutant",
            f"{replayed['new_failures_selected']} of {replayed['new_failures']} new failure(s), "
            f"{replayed['mutants_caught']} of {replayed['mutants_killed']} killed mutant(s) "
            f"caught over {commits} commit(s)",
            0.0,
        ),
        Figure(
            "replay: selected share of the suite's time",
            share if isinstance(share, float) else float("nan"),  # none: no figure, not met
            "the full run of each Python-only commit (median)",
            f"over {replayed['python_only_commits']} Python-only commit(s)",
            TIME_SHARE_GOAL,
        ),
    ]
