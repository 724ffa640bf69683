"""The pooled L2 workers of one pytest process: one per runtime on this process's device."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from recovery.lifecycle import PooledWorker, RecordSink, WorkerKey, reset_attempts

__all__ = ["WorkerPool"]


class WorkerPool:
    def __init__(
        self,
        platform: str,
        device: int | None,  # None: this xdist worker has no device of its own
        xdist_worker: str,
        sink: RecordSink,
        *,
        recovery: bool,
        factory: Callable[..., Any] | None = None,
    ) -> None:
        self.platform = platform
        self.device = device
        self.xdist_worker = xdist_worker
        self._sink = sink
        self._recovery = recovery
        self._factory = factory
        self._workers: dict[str, PooledWorker] = {}

    def get(self, runtime: str) -> PooledWorker:
        """The worker for ``runtime``, started on first use."""
        worker = self._workers.get(runtime)
        if worker is None:
            if self.device is None:
                raise RuntimeError(f"xdist worker {self.xdist_worker} has no device of its own")
            key = WorkerKey(self.platform, runtime, self.device, self.xdist_worker)
            extra = {"factory": self._factory} if self._factory else {}
            worker = PooledWorker(
                key, self._sink, recovery=self._recovery, max_attempts=reset_attempts(), **extra
            )
            self._workers[runtime] = worker
            worker.start()
        return worker

    def shutdown(self) -> None:
        for worker in self._workers.values():
            worker.shutdown()
        self._workers.clear()
