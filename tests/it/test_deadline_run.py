"""A run that ends before its CI step is killed (issue 32): a suite of ~40 s under a deadline of
a quarter of that ends by the deadline with its summary, every test it never ran counted and
named, red, and says why in its verdict line."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

SLOW_FILE = """
    import time

    def test_a():
        time.sleep(2)  # the workload the deadline cuts, not a wait for anything

    def test_b():
        time.sleep(2)
    """
RESOURCE_FILE = """
    import pytest

    @pytest.mark.device_count(1)
    def test_on_a_device():
        pass
    """
DEADLINE_S = 20  # room for start-up on a loaded machine: the run refuses one start-up eats
FILES, SLOTS = 10, 2  # 40 s of work on 2 slots: 20 s, past the deadline's test time (17 s)
TESTS = 2 * FILES + 1


def test_a_suite_past_its_deadline_ends_in_time_with_the_tests_it_never_ran_counted(
    simpler_run: Any, tmp_path: Path
) -> None:
    """What the deadline promises, read from the run's own records: no test ends after the
    deadline, the phases it cut say so, and every planned test is either passed or counted
    as not run. Nothing here depends on how fast the machine is."""
    tests = tmp_path / "tests"
    tests.mkdir()
    for i in range(FILES):
        (tests / f"test_slow_{i}.py").write_text(textwrap.dedent(SLOW_FILE))
    (tests / "test_resource.py").write_text(textwrap.dedent(RESOURCE_FILE))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    options = ("--deadline", f"{DEADLINE_S}s", "-j", str(SLOTS))
    done = simpler_run.suite("tests", options=options, cwd=tmp_path)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    passed = done.records("test", outcome="passed")
    not_run = TESTS - len(passed)
    verdict = done.stdout.rstrip("\n").splitlines()[-1]
    assert verdict.startswith(f"simpler: {len(passed)} passed, "), verdict
    reason = f"(deadline {DEADLINE_S}s reached: {not_run} not run)"
    assert verdict.endswith(f", {not_run} not run -> exit 1 {reason}"), verdict
    assert not_run >= 1  # the work cannot fit the deadline on any machine: 2 slots
    assert f"*** {not_run} planned test(s) not run (" in done.stdout
    (resource,) = done.records("phase", event="start", phase="resource")
    assert resource["planned"] == ["tests/test_resource.py::test_on_a_device"]
    # The order of events: the run's first record comes after its start, so every test that
    # passed ended before the deadline, and the phases say who cut them.
    first = min(r["ts"] for r in done.records())
    assert all(r["ts"] <= first + DEADLINE_S for r in passed)
    ends = {r["phase"]: r for r in done.records("phase", event="end")}
    assert ends["l2"]["deadline"] == f"deadline {DEADLINE_S}s reached"
    assert ends["resource"]["not_started"] == f"deadline {DEADLINE_S}s reached"
