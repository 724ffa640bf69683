"""``simpler.InitCloseRunner``: simpler's runner face over a worker with only init() and close()."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any, ClassVar, cast

import pytest
from pooled_workers import project_worker

import simpler
from simpler import DeviceRuntimeError, InitCloseRunner
from simpler.plugin.project_runtime import missing_methods, runner_factory


class Worker:
    """A project's worker: init(), close() and its own run(); errors as RuntimeError text."""

    opened: ClassVar[list[Worker]] = []

    def __init__(self) -> None:
        self.inits = self.closes = 0
        self.broken = False
        Worker.opened.append(self)

    def init(self) -> None:
        self.inits += 1

    def run(self, name: str) -> str:
        if self.broken or name == "fault":
            self.broken = True
            raise RuntimeError("rtKernelLaunch failed with code 507046")
        if name == "bad_argument":
            raise ValueError("no such kernel")
        return f"ran {name}"

    def close(self) -> None:
        self.closes += 1


def _opened() -> Worker:
    worker = Worker()
    worker.init()
    return worker


def _translate(error: BaseException | None) -> BaseException | None:
    found = re.fullmatch(r"(\w+) failed with code (\d+)", str(error))
    if isinstance(error, RuntimeError) and found:
        return DeviceRuntimeError(int(found[2]), found[1], str(error), device=0, platform="myhw")
    return error


@pytest.fixture(autouse=True)
def _fresh() -> None:
    Worker.opened.clear()


def _runner() -> InitCloseRunner:
    runner = InitCloseRunner(_opened)
    runner.use_translator(_translate)
    return runner


def test_it_is_exported_and_has_what_the_lifecycle_needs() -> None:
    assert simpler.InitCloseRunner is InitCloseRunner
    assert "InitCloseRunner" in simpler.__all__
    assert missing_methods(InitCloseRunner(_opened)) == []


def test_init_opens_one_worker_and_calls_reach_it() -> None:
    runner = _runner()
    assert runner.probe() is False  # nothing open yet: not known good either
    runner.init()
    runner.init()  # already open: no second worker
    assert len(Worker.opened) == 1 and Worker.opened[0].inits == 1
    assert runner.run("noop") == "ran noop"
    assert runner.probe() is True and runner.unusable is False and runner.finalize() == 0


def test_a_device_error_through_it_marks_it_unusable_and_raises_unchanged() -> None:
    runner = _runner()
    runner.init()
    with pytest.raises(RuntimeError, match="507046") as caught:
        runner.run("fault")
    assert type(caught.value) is RuntimeError  # the project's own exception, untouched
    assert runner.unusable is True and runner.probe() is False
    assert runner.finalize() == 507046
    assert Worker.opened[0].closes == 0  # finalize closes nothing


def test_an_error_that_is_not_a_device_error_leaves_it_usable() -> None:
    runner = _runner()
    runner.init()
    with pytest.raises(ValueError):
        runner.run("bad_argument")
    assert runner.unusable is False and runner.probe() is True


def test_without_a_translator_only_a_device_runtime_error_counts() -> None:
    def raises() -> None:
        raise DeviceRuntimeError(62, "halResMap", "init", device=0, platform="myhw")

    runner = InitCloseRunner(_opened)
    runner.init()
    with pytest.raises(RuntimeError):
        runner.run("fault")  # a RuntimeError nobody translated
    assert runner.unusable is False
    with pytest.raises(DeviceRuntimeError):
        runner.device_call(raises)
    assert runner.unusable is True and runner.finalize() == 62


def test_force_reset_closes_and_reopens_in_place() -> None:
    runner = _runner()
    runner.init()
    with pytest.raises(RuntimeError):
        runner.run("fault")
    runner.force_reset()
    first, second = Worker.opened
    assert first.closes == 1 and second.inits == 1 and runner.worker is second
    assert runner.unusable is False and runner.probe() is True
    assert runner.run("noop") == "ran noop"


def test_a_reopen_that_fails_raises_and_probes_bad() -> None:
    attempts: list[int] = []

    def refuses() -> Worker:
        if attempts:
            raise RuntimeError("halResMap failed with code 62")
        attempts.append(1)
        return _opened()

    runner = InitCloseRunner(refuses)
    runner.use_translator(_translate)
    runner.init()
    with pytest.raises(RuntimeError, match="code 62"):
        runner.force_reset()
    assert runner.probe() is False and runner.unusable is True and runner.finalize() == 62
    runner.close()  # nothing open: nothing to close
    assert Worker.opened[0].closes == 1


def test_close_closes_each_worker_at_most_once() -> None:
    runner = _runner()
    runner.init()
    runner.close()
    runner.close()
    assert Worker.opened[0].closes == 1
    with pytest.raises(AttributeError, match="no worker is open"):
        runner.run("noop")


def test_a_subclass_opens_its_own_worker_and_closes_it_its_own_way() -> None:
    closed: list[Worker] = []

    class StRunner(InitCloseRunner):
        def open_worker(self) -> Worker:
            return _opened()

        def close_worker(self, worker: Any) -> None:
            closed.append(worker)

    runner = StRunner()
    runner.init()
    runner.force_reset()
    runner.close()
    assert closed == Worker.opened and len(closed) == 2
    with pytest.raises(NotImplementedError, match="override open_worker"):
        InitCloseRunner().init()


def test_the_lifecycle_heals_it_in_place_and_closes_every_worker_once() -> None:
    records: list[dict[str, Any]] = []
    pooled = project_worker(records, _runner, translate=_translate)
    with pytest.raises(RuntimeError):
        pooled.run("fault")
    # The test caught the error and passed: the runner's own word poisons the worker.
    assert pooled.after_test(None, "t.py::test_caught") is True
    assert pooled.state == "rebuilt" and pooled.run("noop") == "ran noop"
    pooled.shutdown()
    pooled.shutdown()
    # The first worker, the one force_reset reopened in place, the rebuilt runner's.
    assert len(Worker.opened) == 3
    assert [w.closes for w in Worker.opened] == [1, 1, 1]
    assert [r["dest"] for r in records] == [
        "healthy",
        "poisoned",
        "force_reset",
        "rebuilt",
        "closed",
    ]


def test_the_plugin_hands_it_the_projects_device_error_hook() -> None:
    hook = SimpleNamespace(
        pytest_simpler_create_runner=lambda **_: InitCloseRunner(_opened),
        pytest_simpler_device_error=lambda error: (
            found if isinstance(found := _translate(error), DeviceRuntimeError) else None
        ),
    )
    runner = runner_factory(cast(pytest.Config, SimpleNamespace(hook=hook)), "own")("myhw", 0)
    runner.init()
    with pytest.raises(RuntimeError):
        runner.run("fault")
    assert runner.unusable is True
