"""xdist's scope schedulers (``--dist loadfile``, ``loadscope``, ``loadgroup``), crash-safe.

After a worker crash, xdist 3.8's ``LoadScopeScheduling`` (found by tracing its controller):

1. puts the crashed test back in the queue, still pending: every replacement runs it again
   and crashes again, until ``--max-worker-restart`` ends the session;
2. puts back the dead worker's finished units too: a replacement handed one is sent
   ``runtests([])``, answers with no event, and is never given work again, while the units
   left in the queue wait for ever -- the L2 session that never returns;
3. hands a replacement one unit only; an xdist worker starts a test only once it knows the
   next one (or is told to stop), so a replacement holding a one-test unit waits for ever
   (a second way never to return);
4. may give work to a replacement that is ready but has not collected yet: a ``KeyError``,
   an INTERNALERROR.

Here the crashed test counts as done (the controller writes its failure; the retry phase
re-runs it in a fresh process), only unfinished units go back in the queue, a worker gets
work once it has collected, and it is topped up to two tests or told to stop. Loaded only
in an xdist controller under ``simpler run``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdist.scheduler import LoadFileScheduling, LoadGroupScheduling, LoadScopeScheduling

__all__ = ["make_scheduler"]

Workload = dict[str, dict[str, bool]]  # scope -> {nodeid: completed}


class _CrashSafeScopes:
    """Overrides for a ``LoadScopeScheduling`` subclass (xdist >= 3.5 keeps this state)."""

    assigned_work: dict[Any, Workload]
    registered_collections: dict[Any, list[str]]
    workqueue: dict[str, dict[str, bool]]
    _pending_of: Callable[[Workload], int]

    def remove_node(self, node: Any) -> str | None:
        """Forget ``node``; return the test it was running when it crashed (None: it was idle)."""
        workload = self.assigned_work.pop(node)
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

    def _assign_work_unit(self, node: Any) -> None:
        if node not in self.registered_collections:
            return  # not collected yet: its collectionfinish schedules it
        super()._assign_work_unit(node)  # type: ignore[misc]

    def _reschedule(self, node: Any) -> None:
        super()._reschedule(node)  # type: ignore[misc]
        if node.shutting_down or node not in self.registered_collections:
            return
        # A worker runs a test only once it has the next one, or is told to stop. xdist tops
        # a worker up to two tests only in its first schedule; a replacement handed a unit of
        # one test would wait for ever. Top it up, and tell it to stop when nothing is left.
        while self.workqueue and self._pending_of(self.assigned_work[node]) < 2:
            self._assign_work_unit(node)
        if not self.workqueue:
            node.shutdown()


class CrashSafeLoadScope(_CrashSafeScopes, LoadScopeScheduling):  # type: ignore[misc]
    pass


class CrashSafeLoadFile(_CrashSafeScopes, LoadFileScheduling):  # type: ignore[misc]
    pass


class CrashSafeLoadGroup(_CrashSafeScopes, LoadGroupScheduling):  # type: ignore[misc]
    pass


_BY_DIST: dict[str, type[_CrashSafeScopes]] = {
    "loadscope": CrashSafeLoadScope,
    "loadfile": CrashSafeLoadFile,
    "loadgroup": CrashSafeLoadGroup,
}


def make_scheduler(config: Any, log: Any) -> Any | None:
    """The crash-safe scheduler for ``config``'s ``--dist``; None leaves xdist's own."""
    scheduler = _BY_DIST.get(str(config.getvalue("dist")))
    if scheduler is None:
        return None  # "load" and "worksteal" drop the crashed test themselves
    return scheduler(config, log)  # type: ignore[call-arg]
