"""The pooled worker's lifecycle: a ``transitions`` machine run from one table (recovery.table).

The worker fires the table's triggers; the table chooses the edge. The worker's conditions
and callbacks call the device runner; every transition becomes a ``lifecycle`` record
through the sink the worker was given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from transitions import EventData

from recovery.policy import poisons_worker
from recovery.table import RUNNABLE_STATES, STATES, TRANSITIONS, Edge, LifecycleMachine
from simpler.contract.settings import RESET_ATTEMPTS_ENV, positive_int_env
from simpler.errors import DeviceRuntimeError
from simpler.reporting.records import LifecycleRecord, RecordOrigin

__all__ = [
    "DEFAULT_RESET_ATTEMPTS",
    "RUNNABLE_STATES",
    "STATES",
    "TRANSITIONS",
    "DeviceRunner",
    "ErrorTranslator",
    "PooledWorker",
    "RecordSink",
    "RunnerFactory",
    "WorkerKey",
    "reset_attempts",
]

DEFAULT_RESET_ATTEMPTS = 3


class DeviceRunner(Protocol):
    """What the lifecycle calls on a runner: simpler's own, or a project's (its hooks)."""

    def init(self) -> None: ...
    def probe(self) -> bool: ...
    def force_reset(self) -> None: ...
    def finalize(self) -> int: ...
    def close(self) -> None: ...
    @property
    def unusable(self) -> bool: ...


RecordSink = Callable[[LifecycleRecord], None]
RunnerFactory = Callable[[str, int], DeviceRunner]
# A project's exception as a DeviceRuntimeError (or unchanged): the plugin's conftest hook.
ErrorTranslator = Callable[[BaseException | None], BaseException | None]


def reset_attempts() -> int:
    return positive_int_env(RESET_ATTEMPTS_ENV, DEFAULT_RESET_ATTEMPTS)


@dataclass(frozen=True)
class WorkerKey:
    platform: str
    runtime: str
    device: int
    xdist_worker: str  # "gw0", or "main" without xdist

    def __str__(self) -> str:
        return f"{self.platform}/{self.runtime}/dev{self.device}/{self.xdist_worker}"


def _default_factory(platform: str, device: int) -> DeviceRunner:
    from simpler.runner import open_runner

    return open_runner(platform, device)


class PooledWorker:
    """One runner reused by many tests, healed after a device fault instead of reused broken.

    Each runner the factory returns (a new object on every call) is closed at most once: the
    worker lets go of it before it calls its ``close()``, so no later path reaches it again
    (docs/lifecycle.md).
    """

    # Both are put on the model by transitions.Machine.
    state: str
    trigger: Callable[..., bool]

    def __init__(
        self,
        key: WorkerKey,
        sink: RecordSink,
        *,
        origin: RecordOrigin,
        recovery: bool = True,
        max_attempts: int = DEFAULT_RESET_ATTEMPTS,
        factory: RunnerFactory = _default_factory,
        translate: ErrorTranslator | None = None,
    ) -> None:
        self.key = key
        self.recovery = recovery
        self.max_attempts = max_attempts
        self.path: list[str] = ["created"]
        self.skip_reason = ""
        # Set with the skip when only the end of this process can free the card: the plugin
        # ends an xdist worker there, so that a replacement takes the device and the queue.
        self.must_end_process = False
        self.poisonings = 0  # how often this worker was poisoned: its pool's neighbours check
        self._sink = sink
        self._origin = origin  # the run and phase its records name
        self._factory = factory
        self._translate: ErrorTranslator = translate or (lambda error: error)
        self.runner: DeviceRunner | None = None
        self.attempt = 0  # the force reset attempt under way, from 1; the table counts them
        self._machine = LifecycleMachine(
            model=self,
            states=STATES,
            transitions=TRANSITIONS,
            initial="created",
            send_event=True,
            after_state_change="_record_transition",
            auto_transitions=False,
        )

    @property
    def runnable(self) -> bool:
        return self.state in RUNNABLE_STATES or (not self.recovery and self.state == "poisoned")

    def start(self) -> None:
        """Open and init the runner; a failed init is healed like any device fault."""
        try:
            self.runner = self._factory(self.key.platform, self.key.device)
            self.runner.init()
        except Exception as error:
            translated = self._translate(error)
            if not isinstance(translated, DeviceRuntimeError):
                raise
            self._poison(translated, nodeid="")
            return
        self.trigger("init_ok")

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """The runner's own ``run``: kernel and arrays on simpler's; a project's, its own."""
        if self.runner is None:
            raise RuntimeError(f"worker {self.key} has no runner (state {self.state})")
        return getattr(self.runner, "run")(*args, **kwargs)  # noqa: B009 (not in the protocol)

    def after_test(self, error: BaseException | None, nodeid: str) -> bool:
        """Check the card after a test; True when the test's outcome poisoned the worker.

        ``error``: the test's, already translated by the caller (the plugin asks the project's
        hook once, for the test's record too); only the lifecycle's own calls are translated here.
        """
        if self.state not in RUNNABLE_STATES or self.runner is None:
            return False
        if not poisons_worker(error, self.runner.probe() and not self.runner.unusable):
            return False
        self._poison(error, nodeid)
        return True

    def shutdown(self, reason: str = "") -> int:
        """Finalize the runner and close the worker; the finalize rc (0 = card clean).

        ``reason``: why it closes before the session ends (recorded), e.g. retired for
        another runtime on the same device.
        """
        runner, self.runner = self.runner, None  # let go first: close() at most once
        rc = 0
        if runner is not None:
            try:
                rc = runner.finalize()
            finally:
                runner.close()
        if self.state != "closed":
            self.trigger("close", rc=rc or None, reason=reason)
        return rc

    def recheck(self) -> None:
        """Probe the card before the next test: another worker on it was poisoned.

        Workers of one device in one process share its context (a GPU's primary context, a
        card's sticky state): a fault under one may have left the card dirty for all. A dirty
        card is healed (or given up on) before a test of this worker's meets it.
        """
        if self.state not in RUNNABLE_STATES or self.runner is None:
            return
        if self.runner.probe() and not self.runner.unusable:
            return
        self._poison(None, nodeid="")

    def _poison(self, error: BaseException | None, nodeid: str) -> None:
        self.poisonings += 1
        self.trigger("device_error", error=error, nodeid=nodeid)
        # Which way a poisoned worker goes (ended with its process, reset, or left poisoned
        # without recovery), and each attempt's outcome, is the table's choice.
        self.trigger("heal", error=error, nodeid=nodeid)
        # Ends: an attempt that neither took nor may be retried gives up (no conditions).
        while self.state == "force_reset":
            self.trigger("attempt_done", error=self._reset_and_rebuild(), nodeid=nodeid)

    # -- the table's conditions and edge callbacks (each given the trigger's event) --------

    def needs_fresh_process(self, event: EventData) -> bool:
        """The error says so, or the runner does (a test may catch the error and pass)."""
        error = event.kwargs.get("error")
        if isinstance(error, DeviceRuntimeError) and error.process_must_end:
            return True
        return bool(getattr(self.runner, "process_must_end", False))

    def reset_took(self, event: EventData) -> bool:
        return event.kwargs.get("error") is None

    def attempts_left(self, event: EventData) -> bool:
        return self.attempt < self.max_attempts

    def _first_attempt(self, event: EventData) -> None:
        self.attempt = 1

    def _next_attempt(self, event: EventData) -> None:
        self.attempt += 1

    def _explain_process_end(self, event: EventData) -> None:
        # No force reset: on a card whose op still runs it blocks or does nothing.
        rc, where = _rc_where(event.kwargs.get("error"))
        cause = f" (rc {rc} at {where})" if rc is not None else ""
        self.skip_reason = (
            f"worker {self.key} cannot be recovered in this process: an op still runs on "
            f"device {self.key.device}{cause} and nothing in the process can stop it, so no "
            "in-process reset is tried; a fresh process will re-run this test and the later ones"
        )
        self.must_end_process = True

    def _explain_give_up(self, event: EventData) -> None:
        rc, where = _rc_where(event.kwargs.get("error"))
        self.skip_reason = (
            f"worker {self.key} could not be recovered: force reset/rebuild failed "
            f"{self.max_attempts} time(s) (last: rc {rc} at {where}); "
            "a fresh process will re-run this test"
        )

    def _reset_and_rebuild(self) -> BaseException | None:
        """One force reset and rebuild, checked by a probe; the error when it did not take."""
        try:
            if self.runner is not None:
                try:
                    self.runner.force_reset()
                except Exception as error:  # a reset that raises did not take, whatever it is
                    return self._translate(error) or error
                # Let go before closing: a close that raises is not retried by the next
                # attempt, nor repeated at the session's end.
                runner, self.runner = self.runner, None
                runner.close()
            self.runner = self._factory(self.key.platform, self.key.device)
            self.runner.init()
            if not self.runner.probe():
                raise DeviceRuntimeError(
                    -1,
                    "probe",
                    "card still dirty after force reset and rebuild",
                    device=self.key.device,
                    platform=self.key.platform,
                )
        except Exception as error:
            translated = self._translate(error)
            if not isinstance(translated, DeviceRuntimeError):
                raise
            return translated
        return None

    def _record_transition(self, event: EventData) -> None:
        edge = event.transition
        assert isinstance(edge, Edge)
        dest = edge.dest or self.state
        self.path.append(dest)
        reason = event.kwargs.get("reason")
        # A reset's start names no error: the device_error record just before it names the
        # one it heals. Every other edge names the error it was taken for, if any.
        starts_reset = edge.source != dest == "force_reset"
        rc, where = _rc_where(None if starts_reset else event.kwargs.get("error"))
        # The attempt an edge starts (into force_reset) or ends (out of it, but a close).
        in_reset = "force_reset" in (edge.source, dest) and event.event.name != "close"
        record = self._origin.build(
            LifecycleRecord,
            worker=str(self.key),
            runtime=self.key.runtime,
            device=self.key.device,
            source=edge.source,
            dest=dest,
            trigger=edge.label or event.event.name,
            rc=event.kwargs.get("rc", rc),
            where=where,
            nodeid=event.kwargs.get("nodeid", ""),
            attempt=self.attempt if in_reset else None,
        )
        self._sink(record.replace(reason=reason) if reason else record)


def _rc_where(error: BaseException | None) -> tuple[int | None, str | None]:
    if isinstance(error, DeviceRuntimeError):
        return error.rc, error.where
    return None, None
