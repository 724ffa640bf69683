"""A run that ends before its CI step is killed (issue 32): a suite of ~40 s under a deadline of
a quarter of that ends by the deadline with its summary, every test it never ran counted and
named, red, and says why in its verdict line."""

from __future__ import annotations

import textwrap
import time
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
DEADLINE_S = 10


def test_a_suite_past_its_deadline_ends_in_time_with_the_tests_it_never_ran_counted(
    simpler_run: Any, tmp_path: Path
) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    for i in range(10):
        (tests / f"test_slow_{i}.py").write_text(textwrap.dedent(SLOW_FILE))
    (tests / "test_resource.py").write_text(textwrap.dedent(RESOURCE_FILE))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    started = time.monotonic()
    done = simpler_run.suite("tests", options=("--deadline", f"{DEADLINE_S}s"), cwd=tmp_path)
    wall = time.monotonic() - started
    lines = done.stdout.rstrip("\n").splitlines()
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    verdict = lines[-1]
    passed = int(verdict.split("simpler: ", 1)[1].split(" passed")[0])
    not_run = 21 - passed
    assert 0 < passed < 20 and f", {not_run} not run -> exit 1" in verdict, verdict
    assert verdict.endswith(f"(deadline {DEADLINE_S}s reached: {not_run} not run)"), verdict
    assert f"*** {not_run} planned test(s) not run (" in done.stdout
    assert "resource: never started: deadline 10s reached" in done.stdout
    assert "tests/test_resource.py::test_on_a_device" in done.stdout or not_run > 5
    # The suite alone is 40 s of work: the run ended at its deadline, not at the suite's end
    # (a loose bound: the point is the order of magnitude, on a busy machine too).
    assert wall < DEADLINE_S + 10
