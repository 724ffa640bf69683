"""CI's isolation on demand (issue 32): a suite whose tests contaminate one another is red in
one process and green with ``--isolate file``; a crash ends one file's process, never the run;
``--isolate test`` gives every test a process of its own, devices included."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

FILES = {
    "state.py": "initialised = False\n",
    "test_a_sets.py": """
        import state

        def test_initialises_the_process_group():
            state.initialised = True  # as init_process_group does, once per process
        """,
    "test_b_expects_fresh.py": """
        import state

        def test_initialises_it_again():
            assert not state.initialised, "the process group is initialised twice"
        """,
    "test_c_device.py": """
        def test_on_a_device(worker):
            worker.run("noop")

        def test_on_a_device_again(worker):
            worker.run("noop")
        """,
}
CRASH = """
    import os
    import signal

    def test_before():
        pass

    def test_crashes():
        os.kill(os.getpid(), signal.SIGKILL)

    def test_after():
        pass
    """


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    for name, body in FILES.items():
        (tmp_path / "tests" / name).write_text(textwrap.dedent(body))
    (tmp_path / "pytest.ini").write_text("[pytest]\npythonpath = tests\n")
    return tmp_path


def _run(simpler_run: Any, root: Path, *options: str) -> Any:
    return simpler_run.suite("tests", options=options, cwd=root)


def _verdict(done: Any) -> str:
    return done.stdout.rstrip("\n").splitlines()[-1]


def test_contamination_is_red_in_one_process_and_green_with_a_process_per_file(
    simpler_run: Any, suite: Path
) -> None:
    shared = _run(simpler_run, suite, "-j", "1")  # one process for every L2 test
    assert shared.returncode == 1
    assert "the process group is initialised twice" in shared.stdout
    isolated = _run(simpler_run, suite, "--isolate", "file", "-j", "2")
    assert isolated.returncode == 0, isolated.stdout[-3000:]
    assert _verdict(isolated) == "simpler: 4 passed, 0 recovered, 0 flaky, 0 failed -> exit 0"


def test_a_crash_ends_its_files_process_and_its_unrun_tests_are_counted(
    simpler_run: Any, suite: Path
) -> None:
    (suite / "tests" / "test_d_crash.py").write_text(textwrap.dedent(CRASH))
    done = _run(simpler_run, suite, "--isolate", "file")
    assert done.returncode == 1
    assert "child tests/test_d_crash.py: SIGKILL" in done.stdout
    assert _verdict(done).endswith("5 passed, 0 recovered, 0 flaky, 1 failed, 2 not run -> exit 1")


def test_each_test_in_a_process_of_its_own(simpler_run: Any, suite: Path) -> None:
    done = _run(simpler_run, suite, "--isolate", "test")
    assert done.returncode == 0, done.stdout[-3000:]
    runs = [line for line in done.stdout.splitlines() if line.startswith("PASS  tests/")]
    assert len(runs) == 4 and all(" rc=0 " in line for line in runs)
    on_devices = [line for line in runs if "test_c_device" in line]
    assert all(" devices=0 " in line or " devices=1 " in line for line in on_devices)


KILLS_ITS_WARM_PARENT = """
    import os
    import signal
    from pathlib import Path

    import pytest

    @pytest.mark.device_count(1)
    def test_dies_when_forked():
        parent = os.getppid()
        if b"warm_process" in Path(f"/proc/{parent}/cmdline").read_bytes():
            os.kill(parent, signal.SIGKILL)
            signal.pause()  # until its parent-death signal: no verdict
    """


def test_a_forked_child_that_dies_before_its_verdict_runs_once_more_fresh(
    simpler_run: Any, suite: Path
) -> None:
    (suite / "tests" / "test_e_forked.py").write_text(textwrap.dedent(KILLS_ITS_WARM_PARENT))
    done = _run(simpler_run, suite, "--phases", "resource,report", "--new-run")
    assert done.returncode == 0, done.stdout[-3000:]
    assert "died of SIGKILL before its test's verdict; running it once more" in done.stdout
    assert "children: forked from a warm process; 1 run again in a fresh interpreter" in done.stdout
    assert _verdict(done) == "simpler: 1 passed, 0 recovered, 0 flaky, 0 failed -> exit 0"


def test_an_isolated_unit_whose_forked_process_dies_before_a_verdict_runs_once_more_fresh(
    simpler_run: Any, suite: Path
) -> None:
    plain = KILLS_ITS_WARM_PARENT.replace("    @pytest.mark.device_count(1)\n", "")
    (suite / "tests" / "test_e_forked.py").write_text(textwrap.dedent(plain))
    # One unit at a time: the warm process's death ends every child forked from it, and a unit
    # that ran beside it and had reported a verdict already would be a failure of its own.
    done = _run(simpler_run, suite, "--isolate", "file", "-j", "1", "--phases", "l2,report")
    assert done.returncode == 0, done.stdout[-3000:]
    assert "tests/test_e_forked.py: its child, forked from the warm process, died" in done.stdout
    assert _verdict(done) == "simpler: 5 passed, 0 recovered, 0 flaky, 0 failed -> exit 0"


def test_a_project_that_refuses_forking_gets_fresh_children_though_the_warm_process_started(
    simpler_run: Any, suite: Path
) -> None:
    """The warm process starts beside the up-front collection, before the project's ini is
    read: the ini's refusal, learnt after, still holds for every child."""
    (suite / "pytest.ini").write_text(
        "[pytest]\npythonpath = tests\nsimpler_fork_children = false\n"
    )
    done = _run(simpler_run, suite, "--isolate", "file", "-j", "2")
    assert done.returncode == 0, done.stdout[-3000:]
    assert "children: fresh interpreters (the project's simpler_fork_children = false)" in (
        done.stdout
    )
