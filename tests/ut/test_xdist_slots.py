"""Slots apart from devices, in the xdist controller: more workers than cards, and the tests
that use a card only ever on a worker that holds one.

Fake xdist nodes drive the real scheduler (as tests/ut/test_xdist_crashes.py does); the
integration test (tests/it/test_slots_run.py) runs the same through ``simpler run``.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from test_xdist_crashes import FakeNode, _complete, _join

from simpler.plugin.device_assignment import ASSIGNED_DEVICE
from simpler.plugin.xdist_scheduling import make_scheduler

# Three files: a.py and c.py each have one test that uses the card; b.py uses none.
IDS = ["a.py::dev", "a.py::p1", "a.py::p2", "b.py::p1", "b.py::p2", "b.py::p3", "c.py::dev"]
IDS += ["c.py::p1", "d.py::p1", "d.py::p2"]
USES_CARD = {"a.py::dev", "c.py::dev"}


def _routing(
    tmp_path: Path, workers: int, dist: str = "loadfile", no_device: list[str] | None = None
) -> Any:
    """The scheduler, told which tests use no device (default: those of IDS)."""
    listed = tmp_path / "no-device.txt"
    told = no_device if no_device is not None else [n for n in IDS if n not in USES_CARD]
    listed.write_text("".join(f"{n}\n" for n in told))
    values = {"tx": ["popen"] * workers, "dist": dist}
    config = SimpleNamespace(
        getvalue=values.__getitem__,
        option=SimpleNamespace(loadscopereorder=False, simpler_no_device_tests=str(listed)),
        stash=pytest.Stash(),
    )
    return make_scheduler(config, None)


def _node(worker_id: str, device: int | None) -> FakeNode:
    node = FakeNode(worker_id)
    node.workerinput[ASSIGNED_DEVICE] = device  # as the controller's CrashWatch hands it out
    return node


def _one_card_two_workers(sched: Any, ids: list[str]) -> tuple[FakeNode, FakeNode]:
    """gw0 holding the card and gw1 holding none, both collected, the first schedule made."""
    gw0, gw1 = _node("gw0", 0), _node("gw1", None)
    _join(sched, gw0, ids)
    _join(sched, gw1, ids)
    sched.schedule()
    return gw0, gw1


def _run_to_the_end(sched: Any, nodes: list[FakeNode]) -> dict[str, list[str]]:
    """Every node finishes what it was sent, in turn, a test at a time; who ran what."""
    ran: dict[str, list[str]] = {node.gateway.id: [] for node in nodes}
    done: set[str] = set()
    while True:
        progressed = False
        for node in nodes:
            pending = [n for batch in node.sent for n in batch if n not in done]
            if pending:
                done.add(pending[0])
                ran[node.gateway.id].append(pending[0])
                _complete(sched, node, pending[0])
                progressed = True
        if not progressed:
            return ran


def test_one_card_two_workers_the_cards_tests_only_where_the_card_is(tmp_path: Path) -> None:
    sched = _routing(tmp_path, workers=2)
    gw0, gw1 = _one_card_two_workers(sched, IDS)
    ran = _run_to_the_end(sched, [gw0, gw1])
    assert sorted(ran["gw0"] + ran["gw1"]) == sorted(IDS)  # every test once
    assert set(ran["gw0"]) >= USES_CARD
    assert not USES_CARD & set(ran["gw1"])
    assert ran["gw1"]  # the worker without a card was kept busy too
    assert gw0.shutting_down and gw1.shutting_down  # both told to stop at the end


def test_the_worker_that_holds_the_card_takes_the_cards_tests_first(tmp_path: Path) -> None:
    sched = _routing(tmp_path, workers=2)
    gw0, gw1 = _one_card_two_workers(sched, IDS)
    ran = _run_to_the_end(sched, [gw0, gw1])
    assert ran["gw0"][:2] == ["a.py::dev", "c.py::dev"]


def test_a_worker_without_a_card_stops_when_only_the_cards_tests_are_left(
    tmp_path: Path,
) -> None:
    ids = ["a.py::dev", "a.py::dev2", "b.py::dev", "b.py::dev2", "c.py::dev", "d.py::p1"]
    sched = _routing(tmp_path, workers=2, no_device=["d.py::p1"])
    gw0, gw1 = _one_card_two_workers(sched, ids)
    assert gw1.sent == [["d.py::p1"]] and gw1.shutting_down
    assert "c.py" in sched.workqueue and not gw0.shutting_down  # c.py waits for the card


def test_more_workers_than_units_never_stops_the_one_holding_the_card(tmp_path: Path) -> None:
    ids = ["a.py::dev", "b.py::p1"]
    sched = _routing(tmp_path, workers=4, no_device=["b.py::p1"])
    # The card's worker joined last: xdist's own would shut it down as one too many.
    nodes = [_node("gw1", None), _node("gw2", None), _node("gw3", None), _node("gw0", 0)]
    for node in nodes:
        _join(sched, node, ids)
    sched.schedule()
    ran = _run_to_the_end(sched, nodes)
    assert ran["gw0"] == ["a.py::dev"]
    assert sum(len(r) for r in ran.values()) == 2


def test_a_replacement_for_the_cards_worker_takes_its_unfinished_tests(tmp_path: Path) -> None:
    ids = ["a.py::dev", "a.py::dev2", "a.py::dev3", "b.py::p1", "b.py::p2", "b.py::p3"]
    sched = _routing(tmp_path, workers=2, no_device=["b.py::p1", "b.py::p2", "b.py::p3"])
    gw0, gw1 = _one_card_two_workers(sched, ids)
    _complete(sched, gw0, "a.py::dev")
    assert sched.remove_node(gw0) == "a.py::dev2"  # crashed running it: its verdict
    assert "a.py" in sched.workqueue
    assert sched._next_unit(gw1) is None  # never to the worker without a card
    gw2 = _node("gw2", 0)  # the replacement takes the dead worker's card
    _join(sched, gw2, ids)
    sched.schedule()
    assert gw2.sent == [["a.py::dev3"]]


def test_dist_load_is_routed_a_test_a_unit_and_left_alone_when_not_told(tmp_path: Path) -> None:
    for dist in ("load", "worksteal"):
        sched = _routing(tmp_path, workers=2, dist=dist)
        gw0, gw1 = _one_card_two_workers(sched, IDS)
        ran = _run_to_the_end(sched, [gw0, gw1])
        assert set(ran["gw0"]) >= USES_CARD and not USES_CARD & set(ran["gw1"])
    values = {"tx": ["popen"] * 2, "dist": "load"}
    untold = SimpleNamespace(getvalue=values.__getitem__, option=SimpleNamespace())
    assert make_scheduler(untold, None) is None  # xdist's own, outside simpler run's L2


def test_not_told_every_worker_takes_any_file(tmp_path: Path) -> None:
    """A session simpler did not tell which tests use no device (a plain ``pytest -n`` with the
    plugin active) schedules as before, whichever workers hold a card."""
    values = {"tx": ["popen"] * 2, "dist": "loadfile"}
    config = SimpleNamespace(
        getvalue=values.__getitem__, option=SimpleNamespace(loadscopereorder=False)
    )
    sched = make_scheduler(config, None)
    gw0, gw1 = _one_card_two_workers(sched, IDS)
    ran = _run_to_the_end(sched, [gw0, gw1])
    assert ran["gw1"] and ran["gw0"]
    assert sorted(ran["gw0"] + ran["gw1"]) == sorted(IDS)
