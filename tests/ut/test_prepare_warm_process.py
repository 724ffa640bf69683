"""The warm process starts beside the up-front collection, on the chance that the run forks
children: a run refused closes it again at once; a run found to need none tells it to end and
goes on (its preloads may still run), and the run's later close waits for it."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest

from simpler.orchestrator import prepare
from simpler.orchestrator.options import RunOptions
from simpler.usage import UsageError


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(prepare, "cpu_count", lambda: 2)  # a core free beside the collection
    monkeypatch.delenv("SIMPLER_FORK_CHILDREN", raising=False)
    return tmp_path


def _warm_processes() -> list[psutil.Process]:
    found = []
    for process in psutil.Process().children():
        try:
            if "simpler.processes.warm_process" in " ".join(process.cmdline()):
                found.append(process)
        except (psutil.ZombieProcess, psutil.NoSuchProcess):
            continue  # it has exited
    return found


def _options(suite: Path, **given: object) -> RunOptions:
    return RunOptions(
        platform="a5sim", device="0", phases="l2,resource,report",
        report=str(suite / "r.jsonl"), **given,  # type: ignore[arg-type]
    )  # fmt: skip


def test_a_run_refused_after_the_collection_leaves_no_warm_process(suite: Path) -> None:
    with pytest.raises(UsageError, match="both say how the L2 tests share processes"):
        prepare.prepare_run(_options(suite, isolate="file"), ["-n", "2", "test_one.py"])
    assert _warm_processes() == []


def test_a_run_that_forks_no_child_ends_the_warm_process_without_waiting(suite: Path) -> None:
    prepared = prepare.prepare_run(_options(suite), ["test_one.py"])
    assert prepared is not None  # no Resource test and no --isolate: nothing to fork
    ctx, _ = prepared
    for warm in _warm_processes():  # none left: it has already exited
        # Told to end, it exits once its preloads are done, without anyone waiting for it.
        os.waitid(os.P_PID, warm.pid, os.WEXITED | os.WNOWAIT)
    ctx.children.close()  # as the run does when its tests are over: waits for it
    assert _warm_processes() == []
    assert ctx.children.launcher is not None  # a retry child may still fork from a new one


def test_a_run_that_forks_keeps_its_warm_process(suite: Path) -> None:
    prepared = prepare.prepare_run(_options(suite, isolate="file"), ["test_one.py"])
    assert prepared is not None
    ctx, _ = prepared
    try:
        assert len(_warm_processes()) == 1
    finally:
        ctx.children.close()
    assert _warm_processes() == []
