"""The pooled L2 workers of one pytest process: one per runtime on this process's device.

Some device runtimes cannot share a device context (CANN caches one runtime per context):
with ``one_runtime_per_device`` the pool retires the open worker of one runtime before
another runtime's worker starts on the device, and starts a retired runtime anew when it
is needed again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from recovery.lifecycle import (
    ErrorTranslator,
    PooledWorker,
    RecordSink,
    RunnerFactory,
    WorkerKey,
    reset_attempts,
)
from simpler.reporting.records import RecordOrigin

__all__ = ["WorkerPool"]


@dataclass(eq=False)
class WorkerPool:
    """``factory``: one runner factory for every runtime; ``factory_for``: one per runtime
    (a project's ``simpler_create_runner`` hook is asked with the runtime)."""

    platform: str
    device: int | None  # None: this xdist worker has no device of its own
    xdist_worker: str
    sink: RecordSink
    _: KW_ONLY
    origin: RecordOrigin  # the run and phase of its workers' lifecycle records
    recovery: bool
    factory: Callable[..., Any] | None = None
    factory_for: Callable[[str], RunnerFactory] | None = None
    translator: ErrorTranslator | None = None  # the project's own errors to DeviceRuntimeError
    one_runtime_per_device: bool = False
    _workers: dict[str, PooledWorker] = field(default_factory=dict, init=False, repr=False)
    # Per runtime: how many poisonings of the other runtimes' workers it has checked for.
    _neighbour_poisonings: dict[str, int] = field(default_factory=dict, init=False, repr=False)

    def get(self, runtime: str) -> PooledWorker:
        """The worker for ``runtime``, started on first use (and again after a retirement)."""
        worker = self._workers.get(runtime)
        if worker is None or _retired(worker):
            if self.device is None:
                raise RuntimeError(f"xdist worker {self.xdist_worker} has no device of its own")
            if self.one_runtime_per_device:
                self._retire_all_but(runtime)
            key = WorkerKey(self.platform, runtime, self.device, self.xdist_worker)
            extra: dict[str, Any] = {"translate": self.translator}
            if self.factory_for is not None:
                extra["factory"] = self.factory_for(runtime)
            elif self.factory is not None:
                extra["factory"] = self.factory
            worker = PooledWorker(
                key,
                self.sink,
                origin=self.origin,
                recovery=self.recovery,
                max_attempts=reset_attempts(),
                **extra,
            )
            self._workers[runtime] = worker
            worker.start()
        self._check_after_neighbours(runtime, worker)
        return worker

    def _check_after_neighbours(self, runtime: str, worker: PooledWorker) -> None:
        """A fault under another runtime's worker on this device: probe before this one runs."""
        seen = sum(w.poisonings for other, w in self._workers.items() if other != runtime)
        if seen != self._neighbour_poisonings.get(runtime, 0):
            worker.recheck()
        self._neighbour_poisonings[runtime] = seen

    def _retire_all_but(self, runtime: str) -> None:
        for other, worker in self._workers.items():
            if other != runtime and worker.state != "closed":
                worker.shutdown(
                    reason=f"retired: runtime {runtime!r} starts on device {self.device}, "
                    "one runtime per device context"
                )

    def translate(self, error: BaseException | None) -> BaseException | None:
        """A test's error as a ``DeviceRuntimeError`` when the project's hook says it is one."""
        return self.translator(error) if self.translator is not None else error

    def shutdown(self) -> None:
        for worker in self._workers.values():
            worker.shutdown()
        self._workers.clear()


def _retired(worker: PooledWorker) -> bool:
    """Closed by a retirement, not given up on: a worker that could not be recovered keeps
    its skip reason, so its runtime's later tests are still registered for the retry."""
    return worker.state == "closed" and not worker.skip_reason
