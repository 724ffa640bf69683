"""Slots apart from devices, through ``simpler run`` on one card: ``-j`` processes at once, the
card's tests one at a time on it, every other test in any process (docs/running.md, Slots and
devices).

The suites meet at barriers instead of sleeping: a test that needs another process to run at
the same time waits for a file that process writes, and fails after a minute without it, so
a run that never ran the two together fails instead of passing by luck.
"""

from __future__ import annotations

import textwrap
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from simpler.orchestrator.slots import cpu_count

# Each file: a test that uses the card, then three that use none.
MIXED = """
import numpy as np

def test_on_the_card(worker):
    out = worker.run("vector_add", np.ones(4, np.float32), np.ones(4, np.float32))
    assert (out == 2).all()

def test_free_1():
    pass

def test_free_2():
    pass

def test_free_3():
    pass
"""
# Two files of no device that can only pass when both run at once.
MEETS = """
import os, time
from pathlib import Path

def test_meets_the_other_file():
    here = Path(os.environ["MEETING"])
    (here / "{me}").touch()
    end = time.monotonic() + 60
    while not (here / "{other}").exists():
        assert time.monotonic() < end, "the other file never ran at the same time"
        time.sleep(0.01)
"""
# A test whose use of the card its collection cannot see: it asks for the worker at run time.
HIDDEN_WORKER = """
def test_asks_for_the_card_at_run_time(request):
    request.getfixturevalue("worker")
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\n")
    return root


def _write(root: Path, name: str, body: str) -> None:
    (root / "tests" / name).write_text(textwrap.dedent(body))


def _tests(run: Any) -> list[dict[str, Any]]:
    return run.records("test", phase="l2")


def _l2_end(run: Any) -> dict[str, Any]:
    (end,) = [r for r in run.records("phase", phase="l2") if r["event"] == "end"]
    return end


def test_one_card_two_slots_the_cards_tests_on_one_process_the_rest_on_both(
    simpler_run: Any, project: Path
) -> None:
    for index in range(4):
        _write(project, f"test_mixed_{index}.py", MIXED)
    run = simpler_run.suite("tests", device="0", options=("-j", "2"), cwd=project)
    assert run.returncode == 0, run.stdout[-3000:]
    tests = _tests(run)
    assert len(tests) == 16 and {t["outcome"] for t in tests} == {"passed"}
    on_card = [t for t in tests if t["nodeid"].endswith("test_on_the_card")]
    assert {t["device"] for t in on_card} == {0}
    assert len({t["pid"] for t in on_card}) == 1  # the one process that holds the card
    assert len({t["pid"] for t in tests}) == 2  # and a second one beside it, no card
    assert (_l2_end(run)["slots"], _l2_end(run)["devices"]) == (2, [0])
    assert "l2: 16 passed (" in run.stdout and "2 processes, device 0)" in run.stdout


@pytest.mark.skipif(cpu_count() < 2, reason="one CPU: the default is one slot")
def test_a_device_free_suite_fills_every_slot_of_one_card(
    simpler_run: Any, project: Path, tmp_path: Path
) -> None:
    _write(project, "test_a.py", MEETS.format(me="a", other="b"))
    _write(project, "test_b.py", MEETS.format(me="b", other="a"))
    env = {"MEETING": str(tmp_path)}
    shared = simpler_run.suite("tests", device="0", options=("-j", "2"), cwd=project, env=env)
    assert shared.returncode == 0, shared.stdout[-3000:]
    assert _l2_end(shared)["slots"] == 2 and _l2_end(shared)["devices"] == []
    for meeting in tmp_path.glob("[ab]"):
        meeting.unlink()
    # No -j: a slot per CPU, as `pytest -n auto` (this test needs two of them).
    isolated = simpler_run.suite(
        "tests", device="0", options=("--isolate", "file"), cwd=project, env=env
    )
    assert isolated.returncode == 0, isolated.stdout[-3000:]
    assert _l2_end(isolated)["slots"] == 2
    by_process: dict[int, list[str]] = defaultdict(list)
    for test in _tests(isolated):
        by_process[test["pid"]].append(test["nodeid"])
    assert len(by_process) == 2  # a process per file, the two at once


def test_a_test_of_no_device_that_asks_for_one_fails_saying_so(
    simpler_run: Any, project: Path
) -> None:
    _write(project, "test_hidden.py", HIDDEN_WORKER)
    run = simpler_run.suite(
        "tests", device="0", options=("--isolate", "file", "--phases", "l2,report"), cwd=project
    )
    assert run.returncode == 1
    (test,) = _tests(run)
    assert test["outcome"] == "failed"
    assert "this process holds no device" in test["message"]
    assert "a device is never shared" in test["message"]
    assert test["device"] is None


# The card's L2 test, a test of no device that can only pass once the Resource phase has run,
# and the Resource test, which checks that the card's L2 process is gone before it starts.
CARD_THEN_RESOURCE = {
    "test_card.py": """
        import os
        from pathlib import Path

        def test_on_the_card(worker):
            Path(os.environ["MEETING"], "card-pid").write_text(str(os.getpid()))
    """,
    "test_free.py": """
        import os, time
        from pathlib import Path

        def test_ends_only_after_the_resource_test_ran():
            end = time.monotonic() + 60
            while not Path(os.environ["MEETING"], "resource-ran").exists():
                assert time.monotonic() < end, "the Resource phase waited for the L2 session"
                time.sleep(0.01)
    """,
    "test_resource.py": """
        import os
        from pathlib import Path

        import psutil
        import pytest

        @pytest.mark.device_count(1)
        def test_on_the_card_the_l2_session_freed():
            pid = int(Path(os.environ["MEETING"], "card-pid").read_text())
            if psutil.pid_exists(pid):
                assert psutil.Process(pid).status() == psutil.STATUS_ZOMBIE, "card still held"
            Path(os.environ["MEETING"], "resource-ran").touch()
    """,
}


def test_the_resource_phase_starts_when_the_l2_session_frees_the_card_not_when_it_ends(
    simpler_run: Any, project: Path, tmp_path: Path
) -> None:
    for name, body in CARD_THEN_RESOURCE.items():
        _write(project, name, body)
    env = {"MEETING": str(tmp_path)}
    run = simpler_run.suite("tests", device="0", options=("-j", "2"), cwd=project, env=env)
    assert run.returncode == 0, run.stdout[-3000:]
    outcomes = {t["nodeid"].split("::")[1]: t["outcome"] for t in run.records("test")}
    assert set(outcomes.values()) == {"passed"} and len(outcomes) == 3, outcomes
    phases = {(r["phase"], r["event"]): r for r in run.records("phase")}
    assert phases["resource", "start"]["ts"] < phases["l2", "end"]["ts"]
    assert phases["resource", "end"]["returncode"] == 0
    # Its lines follow the session's, not inside them, and the summary is the usual one.
    assert run.stdout.index("passed in") < run.stdout.index("test_resource.py::")
    assert "simpler: 3 passed, 0 recovered, 0 flaky, 0 failed -> exit 0" in run.stdout
