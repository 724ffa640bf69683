"""Children forked from the warm process behave as fresh interpreters do: their own output,
environment, folder and exit code, a crash named by its signal, and a fresh interpreter when
the warm process is gone."""

from __future__ import annotations

import signal
import sys
import textwrap
from pathlib import Path

import psutil
import pytest

from simpler.orchestrator import children
from simpler.orchestrator.children import ChildStarts
from simpler.processes.process import ChildProcess
from simpler.processes.warm_client import WarmProcess, WarmProcessGone

TESTS = """
    import os
    import signal

    def test_sees_its_own_environment_and_folder():
        assert os.environ["WHO"] == "the child"
        assert os.path.exists("here.txt")

    def test_fails():
        assert os.environ.get("CRASH") != "fail", "failed as asked"

    def test_crashes():
        if os.environ.get("CRASH") == "segv":
            os.kill(os.getpid(), signal.SIGSEGV)
    """


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "test_forked.py").write_text(textwrap.dedent(TESTS))
    (tmp_path / "here.txt").write_text("")
    return tmp_path


@pytest.fixture
def warm() -> WarmProcess:
    process = WarmProcess(["pytest"], [], {"PATH": "/usr/bin:/bin"})
    yield process
    process.close()


def _pytest(folder: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args, str(folder)]


def _env(**more: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "WHO": "the child", **more}


def test_a_forked_child_runs_pytest_in_its_own_env_and_folder(
    folder: Path, warm: WarmProcess
) -> None:
    child = ChildProcess(_pytest(folder), env=_env(), cwd=str(folder), launcher=warm.launch)
    assert child.wait() == 0
    assert child.reached_summary and "3 passed" in child.tail
    assert child.pid != warm.pid and warm.forked == 1


def test_a_forked_childs_failure_is_its_exit_code(folder: Path, warm: WarmProcess) -> None:
    child = ChildProcess(
        _pytest(folder), env=_env(CRASH="fail"), cwd=str(folder), launcher=warm.launch
    )
    assert child.wait() == 1
    assert "failed as asked" in child.tail


def test_a_forked_child_that_crashes_dies_of_its_signal(folder: Path, warm: WarmProcess) -> None:
    child = ChildProcess(
        _pytest(folder, "-k", "crashes"), env=_env(CRASH="segv"), cwd=str(folder),
        launcher=warm.launch,
    )  # fmt: skip
    assert child.wait() == -signal.SIGSEGV
    assert not child.reached_summary


def test_a_forked_child_has_a_session_of_its_own_under_the_warm_process(
    tmp_path: Path, warm: WarmProcess
) -> None:
    # The child checks itself: it may be gone before the test could look at it.
    (tmp_path / "test_own_session.py").write_text(
        textwrap.dedent("""
        import os

        def test_a_session_and_group_of_its_own():
            assert os.getsid(0) == os.getpid() == os.getpgid(0)
            assert os.getppid() == int(os.environ["WARM_PID"])
        """)
    )
    env = _env(WARM_PID=str(warm.pid))
    child = ChildProcess(_pytest(tmp_path), env=env, cwd=str(tmp_path), launcher=warm.launch)
    assert child.wait() == 0, child.tail


def test_when_the_warm_process_dies_children_start_fresh_and_the_run_says_so(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(children, "PRELOAD", ("pytest",))
    starts = ChildStarts("a5sim")
    monkeypatch.setattr(starts, "_preload", lambda: ["pytest"])
    assert starts.how == "forked from a warm process"
    starts.start(_env())
    assert starts._warm is not None
    psutil.Process(starts._warm.pid).kill()
    child = ChildProcess(_pytest(folder), env=_env(), cwd=str(folder), launcher=starts.launcher)
    assert child.wait() == 0
    assert starts.how.startswith("fresh interpreters (")
    assert "children start as fresh interpreters" in capsys.readouterr().out
    starts.close()


def test_a_launch_on_a_closed_warm_process_is_refused(folder: Path) -> None:
    process = WarmProcess(["pytest"], [], _env())
    process.close()
    with pytest.raises(WarmProcessGone):
        process.launch(_pytest(folder), _env(), str(folder))


@pytest.mark.parametrize(
    ("platform", "env", "allows", "why"),
    [
        ("cuda", "1", True, "platform cuda"),
        ("a5sim", "0", True, "SIMPLER_FORK_CHILDREN=0"),
        ("a5sim", "1", False, "simpler_fork_children = false"),
    ],
)
def test_where_forking_is_unsafe_children_start_fresh(
    monkeypatch: pytest.MonkeyPatch, platform: str, env: str, allows: bool, why: str
) -> None:
    monkeypatch.setenv("SIMPLER_FORK_CHILDREN", env)
    starts = ChildStarts(platform, project_allows=allows)
    assert starts.launcher is None and why in starts.how
