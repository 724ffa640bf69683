"""A crashed xdist worker, from the controller's side: the scheduler, the devices, the records.

No worker processes: fake xdist nodes drive the real scheduler and the real controller plugin.
The integration tests (tests/it/test_worker_crash.py) run the same through ``simpler run``.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from simpler import report
from simpler.contract.child import ChildContract
from simpler.plugin.crash_watch import CrashWatch
from simpler.plugin.device_assignment import ASSIGNED_DEVICE
from simpler.plugin.options import PluginSettings
from simpler.plugin.test_records import HELD_WORKER, HeldWorker
from simpler.plugin.xdist_scheduling import make_scheduler


class FakeNode:
    """What the scheduler and the controller plugin use of an xdist WorkerController."""

    def __init__(self, worker_id: str) -> None:
        self.gateway = SimpleNamespace(id=worker_id)
        self.workerinput: dict[str, Any] = {"workerid": worker_id}
        self.sent: list[list[str]] = []
        self.shutting_down = False
        self.collection: list[str] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.append([self.collection[i] for i in indices])

    def shutdown(self) -> None:
        self.shutting_down = True

    def __repr__(self) -> str:
        return f"<FakeNode {self.gateway.id}>"


def _scheduler(workers: int = 2, dist: str = "loadfile") -> Any:
    values = {"tx": ["popen"] * workers, "dist": dist}
    config = SimpleNamespace(
        getvalue=values.__getitem__, option=SimpleNamespace(loadscopereorder=False)
    )
    return make_scheduler(config, None)


def _join(sched: Any, node: FakeNode, ids: list[str]) -> None:
    node.collection = list(ids)
    sched.add_node(node)
    sched.add_node_collection(node, ids)


def _complete(sched: Any, node: FakeNode, nodeid: str) -> None:
    sched.mark_test_complete(node, node.collection.index(nodeid))


def test_only_the_scope_dists_get_a_crash_safe_scheduler() -> None:
    for dist in ("loadfile", "loadscope", "loadgroup"):
        assert type(_scheduler(dist=dist)).__name__.startswith("CrashSafe")
    assert _scheduler(dist="load") is None
    assert _scheduler(dist="worksteal") is None


def test_the_crashed_test_is_not_run_again_and_the_rest_of_its_file_is() -> None:
    ids = ["a.py::a1", "a.py::a2", "a.py::a3", "b.py::b1", "b.py::b2", "c.py::c1"]
    sched = _scheduler()
    gw0, gw1 = FakeNode("gw0"), FakeNode("gw1")
    _join(sched, gw0, ids)
    _join(sched, gw1, ids)
    sched.schedule()
    assert gw0.sent == [["a.py::a1", "a.py::a2", "a.py::a3"]]
    assert gw1.sent == [["b.py::b1", "b.py::b2"], ["c.py::c1"]]
    _complete(sched, gw0, "a.py::a1")

    assert sched.remove_node(gw0) == "a.py::a2"  # gw0 died running a2
    assert dict(sched.workqueue) == {
        "a.py": {"a.py::a1": True, "a.py::a2": True, "a.py::a3": False}
    }
    # Its replacement is ready but has not collected: no work yet, and no KeyError.
    gw2 = FakeNode("gw2")
    sched.add_node(gw2)
    for node in sched.nodes:
        sched._reschedule(node)
    assert gw2.sent == []
    gw2.collection = list(ids)
    sched.add_node_collection(gw2, ids)
    sched.schedule()
    # One test left: sent with the word to stop, so the worker does not wait for a next one.
    assert gw2.sent == [["a.py::a3"]]
    assert gw2.shutting_down


def test_a_dead_workers_finished_files_are_not_queued_again() -> None:
    ids = ["a.py::a1", "a.py::a2", "a.py::a3", "b.py::b1", "c.py::c1"]
    sched = _scheduler()
    gw0, gw1 = FakeNode("gw0"), FakeNode("gw1")
    _join(sched, gw0, ids)
    _join(sched, gw1, ids)
    sched.schedule()
    assert gw1.sent == [["b.py::b1"], ["c.py::c1"]]
    _complete(sched, gw1, "b.py::b1")
    assert sched.remove_node(gw1) == "c.py::c1"
    assert not sched.workqueue  # b.py finished, c.py's one test crashed: nothing to re-run


def test_a_replacement_is_topped_up_to_two_tests() -> None:
    ids = ["a.py::a1", "a.py::a2", "a.py::a3", "b.py::b1", "b.py::b2", "b.py::b3"]
    ids += ["c.py::c1", "d.py::d1"]
    sched = _scheduler()
    gw0, gw1 = FakeNode("gw0"), FakeNode("gw1")
    _join(sched, gw0, ids)
    _join(sched, gw1, ids)
    sched.schedule()
    assert list(sched.workqueue) == ["c.py", "d.py"]
    _complete(sched, gw0, "a.py::a1")
    _complete(sched, gw0, "a.py::a2")
    assert sched.remove_node(gw0) == "a.py::a3"
    assert list(sched.workqueue) == ["c.py", "d.py"]  # a.py is done: its crash is its verdict
    gw2 = FakeNode("gw2")
    _join(sched, gw2, ids)
    sched.schedule()
    assert gw2.sent == [["c.py::c1"], ["d.py::d1"]]


def test_an_idle_worker_that_finishes_normally_has_no_crashed_test() -> None:
    ids = ["a.py::a1"]
    sched = _scheduler(workers=1)
    gw0 = FakeNode("gw0")
    _join(sched, gw0, ids)
    sched.schedule()
    _complete(sched, gw0, "a.py::a1")
    assert sched.remove_node(gw0) is None


# The controller plugin.


def _settings(tmp_path: Path) -> PluginSettings:
    return PluginSettings(
        platform="a5sim",
        devices=[0, 1],
        report=tmp_path / "report.jsonl",
        faults="",
        recovery=True,
        retry_role=None,
        class_lines=False,
        told=ChildContract(phase="l2"),
    )


def _watch(tmp_path: Path, cap: str | None = "4") -> CrashWatch:
    config = SimpleNamespace(
        option=SimpleNamespace(maxworkerrestart=cap, simpler_no_device_tests=None),
        stash=pytest.Stash(),
        getoption=lambda name, default=None: cap if name == "maxworkerrestart" else default,
        pluginmanager=SimpleNamespace(get_plugin=lambda name: None),
    )
    return CrashWatch(config, _settings(tmp_path), active=True)


def _setup_report(nodeid: str, held: HeldWorker | None) -> pytest.TestReport:
    rep = pytest.TestReport(nodeid, (nodeid, 0, nodeid), {}, "passed", None, "setup")
    if held is not None:
        setattr(rep, HELD_WORKER, held.as_json())
    return rep


def _crash(watch: CrashWatch, node: FakeNode, nodeid: str) -> None:
    watch.pytest_testnodedown(node, "Not properly terminated")
    crash_report = pytest.TestReport(nodeid, (nodeid, None, nodeid), {}, "failed", "boom", "???")
    crash_report.node = node
    watch.pytest_handlecrashitem(nodeid, crash_report, sched=None)


def _tests(tmp_path: Path) -> dict[str, dict[str, Any]]:
    return {r["nodeid"]: r for r in report.read(tmp_path / "report.jsonl") if r["type"] == "test"}


def test_a_replacement_worker_takes_the_dead_workers_device(tmp_path: Path) -> None:
    watch = _watch(tmp_path)
    gw0, gw1, gw2 = FakeNode("gw0"), FakeNode("gw1"), FakeNode("gw2")
    watch.pytest_configure_node(gw0)
    watch.pytest_configure_node(gw1)
    assert (gw0.workerinput[ASSIGNED_DEVICE], gw1.workerinput[ASSIGNED_DEVICE]) == (0, 1)
    _crash(watch, gw0, "a.py::a2")
    watch.pytest_configure_node(gw2)
    assert gw2.workerinput[ASSIGNED_DEVICE] == 0
    assert watch.devices.held == {"gw1": 1, "gw2": 0}


def test_a_crash_is_the_failure_of_the_test_that_was_running(tmp_path: Path) -> None:
    watch = _watch(tmp_path)
    gw0 = FakeNode("gw0")
    watch.pytest_configure_node(gw0)
    held = HeldWorker("a5sim/default/dev0/gw0", "default", 0)
    watch.pytest_runtest_logstart("a.py::a2")
    watch.pytest_runtest_logreport(_setup_report("a.py::a2", held))
    _crash(watch, gw0, "a.py::a2")
    record = _tests(tmp_path)["a.py::a2"]
    assert record["outcome"] == "failed"
    assert record["message"] == "worker gw0 crashed while running a.py::a2"
    assert record["crashed"] == "a.py::a2"  # the fact, as a field: no reader parses the message
    assert record["poisoned"] is True  # held a pooled worker: the retry re-runs it
    assert (record["worker"], record["device"], record["runtime"]) == (held.worker, 0, "default")
    assert record["phase"] == "l2"
    assert "node down: Not properly terminated" in record["tail"]


def test_a_crash_in_a_test_without_a_pooled_worker_does_not_poison(tmp_path: Path) -> None:
    watch = _watch(tmp_path)
    gw1 = FakeNode("gw1")
    watch.pytest_configure_node(gw1)
    watch.pytest_configure_node(FakeNode("gw0"))
    watch.pytest_runtest_logreport(_setup_report("a.py::plain", None))
    _crash(watch, gw1, "a.py::plain")
    record = _tests(tmp_path)["a.py::plain"]
    assert (record["outcome"], record["poisoned"], record["worker"]) == ("failed", False, None)
    assert record["device"] == 0  # the device the controller gave gw1


def test_a_crash_before_the_setup_report_counts_as_holding_a_worker(tmp_path: Path) -> None:
    watch = _watch(tmp_path)
    gw0 = FakeNode("gw0")
    watch.pytest_configure_node(gw0)
    _crash(watch, gw0, "a.py::a1")
    assert _tests(tmp_path)["a.py::a1"]["poisoned"] is True


def test_tests_a_stopped_session_never_ran_are_named(tmp_path: Path) -> None:
    watch = _watch(tmp_path, cap="0")
    gw0 = FakeNode("gw0")
    watch.pytest_configure_node(gw0)
    watch.pytest_xdist_node_collection_finished(gw0, ["a.py::a1", "a.py::a2", "b.py::b1"])
    watch.pytest_runtest_logreport(
        pytest.TestReport("a.py::a1", ("a.py", 0, "a1"), {}, "passed", None, "teardown")
    )
    _crash(watch, gw0, "a.py::a2")
    watch.pytest_sessionfinish(SimpleNamespace(), exitstatus=1)
    records = _tests(tmp_path)
    assert set(records) == {"a.py::a2", "b.py::b1"}  # a1 passed: its record is the worker's
    assert records["b.py::b1"]["outcome"] == "failed"
    assert records["b.py::b1"]["message"] == (
        "not run: the L2 session stopped after 1 worker crashes (--max-worker-restart 0)"
    )


def test_no_not_run_records_without_a_crash_or_after_an_interrupt(tmp_path: Path) -> None:
    watch = _watch(tmp_path)
    watch.pytest_xdist_node_collection_finished(FakeNode("gw0"), ["a.py::a1"])
    watch.pytest_sessionfinish(SimpleNamespace(), exitstatus=1)
    gw0 = FakeNode("gw0")
    watch.pytest_configure_node(gw0)
    watch.pytest_testnodedown(gw0, "keyboard-interrupt")
    watch.pytest_sessionfinish(SimpleNamespace(), exitstatus=pytest.ExitCode.INTERRUPTED)
    assert not (tmp_path / "report.jsonl").exists()


def test_workers_that_die_before_collecting_fail_the_session(tmp_path: Path) -> None:
    watch = _watch(tmp_path)
    gw0 = FakeNode("gw0")
    watch.pytest_configure_node(gw0)
    watch.pytest_testnodedown(gw0, "Not properly terminated")
    session = SimpleNamespace(exitstatus=pytest.ExitCode.NO_TESTS_COLLECTED)
    watch.pytest_sessionfinish(session, exitstatus=session.exitstatus)
    assert session.exitstatus == pytest.ExitCode.TESTS_FAILED  # not "no tests ran", exit 5


def test_a_crash_in_a_test_that_uses_no_device_never_poisons(tmp_path: Path) -> None:
    listed = tmp_path / "no-device.txt"
    listed.write_text("a.py::a1\n")
    watch = _watch(tmp_path)
    watch._config.option.simpler_no_device_tests = str(listed)
    gw0 = FakeNode("gw0")
    watch.pytest_configure_node(gw0)
    _crash(watch, gw0, "a.py::a1")  # died before its setup report
    gw1 = FakeNode("gw1")
    watch.pytest_configure_node(gw1)
    _crash(watch, gw1, "b.py::b1")  # a test that uses a device, died in its setup
    tests = _tests(tmp_path)
    assert tests["a.py::a1"]["poisoned"] is False
    assert tests["b.py::b1"]["poisoned"] is True
