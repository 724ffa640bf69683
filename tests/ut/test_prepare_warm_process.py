"""The warm process starts beside the up-front collection, on the chance that the run forks
children: a run refused or found to need none closes it again at once."""

from __future__ import annotations

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
    return [
        p
        for p in psutil.Process().children()
        if p.is_running() and "simpler.processes.warm_process" in " ".join(p.cmdline())
    ]


def _options(suite: Path, **given: object) -> RunOptions:
    return RunOptions(
        platform="a5sim", device="0", phases="l2,resource,report",
        report=str(suite / "r.jsonl"), **given,  # type: ignore[arg-type]
    )  # fmt: skip


def test_a_run_refused_after_the_collection_leaves_no_warm_process(suite: Path) -> None:
    with pytest.raises(UsageError, match="both say how the L2 tests share processes"):
        prepare.prepare_run(_options(suite, isolate="file"), ["-n", "2", "test_one.py"])
    assert _warm_processes() == []


def test_a_run_that_forks_no_child_closes_the_warm_process(suite: Path) -> None:
    prepared = prepare.prepare_run(_options(suite), ["test_one.py"])
    assert prepared is not None  # no Resource test and no --isolate: nothing to fork
    assert _warm_processes() == []


def test_a_run_that_forks_keeps_its_warm_process(suite: Path) -> None:
    prepared = prepare.prepare_run(_options(suite, isolate="file"), ["test_one.py"])
    assert prepared is not None
    ctx, _ = prepared
    try:
        assert len(_warm_processes()) == 1
    finally:
        ctx.children.close()
    assert _warm_processes() == []
