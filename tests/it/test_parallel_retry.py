"""The retry phase spreads its fresh processes over every healthy device of the run."""

from __future__ import annotations

import itertools
from collections import defaultdict
from pathlib import Path
from typing import Any

# One file per xdist worker (--dist loadfile): a fault first, then three victims.
SUITE_FILE = """
import pytest

pytestmark = pytest.mark.runtime("host_build_graph")


class TestFault:
    def test_launch(self, worker):
        worker.run("noop")


class TestVictim1:
    def test_noop(self, worker):
        worker.run("noop")


class TestVictim2:
    def test_noop(self, worker):
        worker.run("noop")


class TestVictim3:
    def test_noop(self, worker):
        worker.run("noop")
"""
FILES = [f"test_part{i}.py" for i in range(1, 5)]


def _four_poisoned_workers(simpler_run: Any, tmp_path: Path) -> Any:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n")
    for name in FILES:
        (project / name).write_text(SUITE_FILE)
    # Every worker's first test hangs on attempt 1 and no force reset takes: four workers
    # poison-skip their victims, and four triggers want two more attempts each.
    faults = "hang@TestFault#1,force_reset_fail"
    return simpler_run(
        "run", "--platform", "a5sim", "--device", "0-3", "--", ".",
        cwd=project,
        env={"SIMPLER_SIM_FAULTS": faults, "SIMPLER_RESET_ATTEMPTS": "1"},
    )  # fmt: skip


def test_four_poisoned_workers_retry_on_every_device_and_never_share_one(
    simpler_run: Any, tmp_path: Path
) -> None:
    run = _four_poisoned_workers(simpler_run, tmp_path)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    retry = run.outcomes("retry")
    victims = [f"{f}::TestVictim{i}::test_noop" for f in FILES for i in (1, 2, 3)]
    triggers = [f"{f}::TestFault::test_launch" for f in FILES]
    assert {v: retry.get(v) for v in victims} == dict.fromkeys(victims, "recovered")
    assert {t: retry.get(t) for t in triggers} == dict.fromkeys(triggers, "flaky")
    tests = run.records("test", phase="retry")
    assert len({r["device"] for r in tests}) >= 3, [r["device"] for r in tests]
    # Each fresh process opens its worker and closes it at the end: on one device those
    # spans never overlap, so no two processes ever held it at once.
    spans: dict[int, list[tuple[float, float]]] = defaultdict(list)
    opened: dict[str, float] = {}
    for record in run.records("lifecycle", phase="retry"):
        key = f"{record['worker']}:{record['device']}"
        if record["dest"] == "healthy":
            opened[key] = record["ts"]
        elif record["dest"] == "closed" and key in opened:
            spans[record["device"]].append((opened.pop(key), record["ts"]))
    assert sum(len(s) for s in spans.values()) == 8  # 4 victim processes + 4 trigger attempts
    for device, device_spans in spans.items():
        ordered = sorted(device_spans)
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(ordered)), (device, ordered)
