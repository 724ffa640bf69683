"""The run's slots (``-j``, ``SIMPLER_JOBS``, the CPU count) and how many xdist workers the L2
session gets from them: a pure function of the run's context."""

from __future__ import annotations

from pathlib import Path

import pytest

from simpler.contract.settings import JOBS_ENV
from simpler.orchestrator.context import RunContext, RunSetup
from simpler.orchestrator.l2 import l2_workers
from simpler.orchestrator.options import RunOptions
from simpler.orchestrator.pytest_args import ArgGroup, PytestArgs
from simpler.orchestrator.slots import cpu_count, run_slots
from simpler.usage import UsageError

# Five files: one test in a.py uses the card, every other test none.
TESTS = ["a.py::dev", "a.py::free", "b.py::t", "c.py::t", "d.py::t", "e.py::t"]
NO_DEVICE = frozenset(TESTS) - {"a.py::dev"}


def _ctx(
    tmp_path: Path,
    *,
    slots: int,
    devices: list[int] | None = None,
    tests: list[str] | None = TESTS,
    no_device: frozenset[str] = NO_DEVICE,
    args: PytestArgs | None = None,
) -> RunContext:
    setup = RunSetup(
        RunOptions("a5sim", "0", "l2"),
        devices or [0],
        tmp_path / "r.jsonl",
        "run",
        slots=slots,
        l2_tests=tests,
        l2_plain=no_device,
        pytest_args=args or PytestArgs(),
    )
    return RunContext(setup)


def _n(value: str) -> PytestArgs:
    return PytestArgs((ArgGroup(("-n", value), (("numprocesses", (value,)),)),))


def test_the_slots_are_j_then_the_environment_then_the_cpus_never_below_the_devices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(JOBS_ENV, raising=False)
    assert run_slots(None, 1, "simpler run") == cpu_count()
    assert run_slots(None, cpu_count() + 3, "simpler run") == cpu_count() + 3
    monkeypatch.setenv(JOBS_ENV, "5")
    assert run_slots(None, 1, "simpler run") == 5
    assert run_slots(3, 1, "simpler run") == 3  # -j wins over the environment
    monkeypatch.setenv(JOBS_ENV, "many")
    with pytest.raises(UsageError, match="SIMPLER_JOBS must be a positive integer, got 'many'"):
        run_slots(None, 1, "simpler run")


def test_one_card_eight_slots_a_worker_for_the_card_and_one_per_file_of_no_device(
    tmp_path: Path,
) -> None:
    # a.py's card test takes the card's worker; the five units of no device one worker each.
    assert l2_workers(_ctx(tmp_path, slots=8)) == 6
    assert l2_workers(_ctx(tmp_path, slots=2)) == 2


def test_a_suite_of_device_tests_gets_a_worker_per_device_however_many_slots(
    tmp_path: Path,
) -> None:
    ctx = _ctx(tmp_path, slots=16, devices=[0, 1], no_device=frozenset())
    assert l2_workers(ctx) == 2


def test_the_users_n_is_xdists_worker_count_and_x_keeps_one_process(tmp_path: Path) -> None:
    assert l2_workers(_ctx(tmp_path, slots=2, args=_n("5"))) == 5
    assert l2_workers(_ctx(tmp_path, slots=8, args=_n("auto"))) == 6  # auto: the slots
    assert l2_workers(_ctx(tmp_path, slots=8, args=_n("0"))) == 1
    assert l2_workers(_ctx(tmp_path, slots=8, args=PytestArgs(maxfail=1))) == 1
    assert l2_workers(_ctx(tmp_path, slots=8, args=PytestArgs(xdist=False))) == 1


def test_not_collected_up_front_every_test_waits_for_a_device(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, slots=8, devices=[0, 1, 2], tests=None)
    assert l2_workers(ctx) == 3
