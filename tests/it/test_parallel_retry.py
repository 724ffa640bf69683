"""The retry phase spreads its fresh processes over every healthy device of the run."""

from __future__ import annotations

import itertools
from collections import defaultdict
from pathlib import Path
from typing import Any

from trigger_victims import TriggerVictims

IT = Path(__file__).resolve().parent
# One file per xdist worker (--dist loadfile): a fault first, then three victims.
PARTS = [TriggerVictims(f"test_part{i}.py", ("noop", "noop", "noop")) for i in range(1, 5)]
PART_FILE = """
import pytest
from trigger_victims import TriggerVictims

pytestmark = pytest.mark.runtime("host_build_graph")

TestTrigger, TestVictim1, TestVictim2, TestVictim3 = TriggerVictims({path!r}, {kinds!r}).classes()
"""


def _four_poisoned_workers(simpler_run: Any, tmp_path: Path) -> Any:
    project = tmp_path / "project"
    project.mkdir()
    # The parts import the suite from tests/it, as the scenario files do.
    (project / "pytest.ini").write_text(f"[pytest]\npythonpath = {IT}\n")
    for part in PARTS:
        (project / part.path).write_text(PART_FILE.format(path=part.path, kinds=part.victim_kinds))
    # Every worker's first test hangs on attempt 1 and no force reset takes: four workers
    # poison-skip their victims, and four triggers want two more attempts each.
    faults = "hang@TestTrigger#1,force_reset_fail"
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
    victims = [victim for part in PARTS for victim in part.victims]
    triggers = [part.trigger for part in PARTS]
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
