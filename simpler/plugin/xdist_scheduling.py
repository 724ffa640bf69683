"""xdist's scope schedulers (``--dist loadfile``, ``loadscope``, ``loadgroup``), crash-safe
and aware of which workers hold a device; loaded only in an xdist controller under ``simpler run``.

After a crash the crashed test counts as done, only unfinished units go back in the queue, a
worker gets work once it has collected and is topped up to two tests or told to stop; a unit
that needs a device goes only to a worker that holds one. What xdist 3.8 does instead, and
why: docs/architecture.md, "xdist's scheduler, crash-safe and aware of devices".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdist.scheduler import LoadFileScheduling, LoadGroupScheduling, LoadScopeScheduling

from simpler.plugin.device_assignment import ASSIGNED_DEVICE
from simpler.plugin.device_handover import handover_file
from simpler.plugin.no_device_tests import known_to_use_no_device, no_device_tests

__all__ = ["NO_DEVICE_UNIT", "make_scheduler"]

Workload = dict[str, dict[str, bool]]  # scope -> {nodeid: completed}
# Appended to a scope's name for the unit of its tests that use no device.
NO_DEVICE_UNIT = " [no device]"


class _CrashSafeScopes:
    """Overrides for a ``LoadScopeScheduling`` subclass (xdist >= 3.5 keeps this state)."""

    config: Any
    collection: list[str] | None
    assigned_work: dict[Any, Workload]
    registered_collections: dict[Any, list[str]]
    workqueue: dict[str, dict[str, bool]]
    _pending_of: Callable[[Workload], int]
    _check_nodes_have_same_collection: Callable[[], bool]

    def __init__(self, config: Any, log: Any = None) -> None:
        super().__init__(config, log)  # type: ignore[call-arg]
        # A node's collection is fixed once registered: each node id's index, looked up once.
        self._indexes: dict[Any, dict[str, int]] = {}

    def remove_node(self, node: Any) -> str | None:
        """Forget ``node``; return the test it was running when it crashed (None: it was idle)."""
        workload = self.assigned_work.pop(node)
        self._indexes.pop(node, None)
        unfinished = {scope: unit for scope, unit in workload.items() if not all(unit.values())}
        if not unfinished:
            return None
        scope, crashed = next(
            (scope, nodeid)
            for scope, unit in unfinished.items()
            for nodeid, done in unit.items()
            if not done
        )
        unfinished[scope][crashed] = True  # its verdict is the crash; never run it again here
        self.workqueue.update(
            {scope: unit for scope, unit in unfinished.items() if not all(unit.values())}
        )
        for other in list(self.assigned_work):
            self._reschedule(other)
        return crashed

    def _split_scope(self, nodeid: str) -> str:
        scope: str = super()._split_scope(nodeid)  # type: ignore[misc]
        return scope + NO_DEVICE_UNIT if known_to_use_no_device(self.config, nodeid) else scope

    def schedule(self) -> None:
        """The first schedule: the collection into units, then each worker topped up, those
        that hold a device first. (xdist's own would shut down the workers past the number of
        units whichever they are: the only one holding a device among them.)"""
        assert self.collection_is_completed  # type: ignore[attr-defined]
        if self.collection is None:
            if not self._check_nodes_have_same_collection():
                return  # xdist has reported the difference
            self.collection = list(next(iter(self.registered_collections.values())))
            units: dict[str, dict[str, bool]] = {}
            for nodeid in self.collection:
                units.setdefault(self._split_scope(nodeid), {})[nodeid] = False
            ordered = list(units.items())
            if getattr(self.config.option, "loadscopereorder", False):
                ordered.sort(key=lambda unit: -len(unit[1]))  # the largest units first
            self.workqueue.update(ordered)
        ordered_nodes = sorted(self.assigned_work, key=lambda n: not _holds_device(n))
        for node in ordered_nodes:  # a unit each first, as xdist's own does
            if not self.assigned_work[node]:
                self._assign_work_unit(node)
        for node in ordered_nodes:
            self._reschedule(node)

    def _next_unit(self, node: Any) -> str | None:
        """The unit ``node`` takes next: one that needs a device only where it holds one, and
        those first there; any worker takes a unit of tests that use no device."""
        if no_device_tests(self.config) is None:  # not told: every unit to any worker
            return next(iter(self.workqueue), None)
        holds = _holds_device(node)
        no_device = None
        for scope in self.workqueue:
            if not scope.endswith(NO_DEVICE_UNIT):
                if holds:
                    return scope
            elif not holds:
                return scope
            elif no_device is None:
                no_device = scope
        if no_device is not None and self._hands_device_on(node):
            return None  # the card's worker ends; the Resource phase takes the card
        return no_device

    def _hands_device_on(self, node: Any) -> bool:
        """Whether ``node``, which holds a device and has no device unit left, ends instead
        of taking tests that use no device: Resource tests wait for its device and a worker
        that holds none is there to run those tests."""
        if handover_file(self.config) is None:
            return False
        return any(
            not _holds_device(other) and not other.shutting_down
            for other in self.assigned_work
            if other is not node
        )

    def _assign_work_unit(self, node: Any) -> None:
        if node not in self.registered_collections:
            return  # not collected yet: its collectionfinish schedules it
        scope = self._next_unit(node)
        if scope is None:
            return
        unit = self.workqueue.pop(scope)
        self.assigned_work.setdefault(node, {})[scope] = unit
        index = self._indexes.get(node)
        if index is None:
            index = {n: i for i, n in enumerate(self.registered_collections[node])}
            self._indexes[node] = index
        node.send_runtest_some([index[n] for n, done in unit.items() if not done])

    def _reschedule(self, node: Any) -> None:
        if node.shutting_down or node not in self.registered_collections:
            return
        # A worker runs a test only once it has the next one, or is told to stop. xdist tops
        # a worker up to two tests only in its first schedule; a replacement handed a unit of
        # one test would wait for ever. Top it up, and tell it to stop when nothing is left
        # that it may take.
        if self._pending_of(self.assigned_work[node]) <= 2:  # xdist's low watermark
            self._assign_work_unit(node)
        while self._pending_of(self.assigned_work[node]) < 2 and self._next_unit(node):
            self._assign_work_unit(node)
        if self._next_unit(node) is None:
            node.shutdown()


class CrashSafeLoadScope(_CrashSafeScopes, LoadScopeScheduling):  # type: ignore[misc]
    pass


class CrashSafeLoadFile(_CrashSafeScopes, LoadFileScheduling):  # type: ignore[misc]
    pass


class CrashSafeLoadGroup(_CrashSafeScopes, LoadGroupScheduling):  # type: ignore[misc]
    pass


class _TestScopes(LoadScopeScheduling):  # type: ignore[misc]
    """A test a unit."""

    def _split_scope(self, nodeid: str) -> str:
        return nodeid


class CrashSafeLoadTest(_CrashSafeScopes, _TestScopes):
    """``--dist load`` or ``worksteal`` where some workers hold no device: a test a unit."""


_BY_DIST: dict[str, type[_CrashSafeScopes]] = {
    "loadscope": CrashSafeLoadScope,
    "loadfile": CrashSafeLoadFile,
    "loadgroup": CrashSafeLoadGroup,
}
_PER_TEST = ("load", "worksteal")


def _holds_device(node: Any) -> bool:
    """Whether the controller handed ``node`` a device (a session that hands none out, all)."""
    return getattr(node, "workerinput", {}).get(ASSIGNED_DEVICE, 0) is not None


def make_scheduler(config: Any, log: Any) -> Any | None:
    """The crash-safe scheduler for ``config``'s ``--dist``; None leaves xdist's own."""
    dist = str(config.getvalue("dist"))
    scheduler = _BY_DIST.get(dist)
    if scheduler is None and dist in _PER_TEST and no_device_tests(config) is not None:
        scheduler = CrashSafeLoadTest  # workers without a device must not get device tests
    if scheduler is None:
        return None  # "load" and "worksteal" drop the crashed test themselves
    return scheduler(config, log)
