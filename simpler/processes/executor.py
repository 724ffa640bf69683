"""Run jobs on real devices: the placement policy decides, this module starts, watches and stops.

The loop runs the policy's ``pick`` on the wall clock: start, reap, enforce the per-job and
session timeouts, stop early on ``exit_first`` or a signal, which the handler only notes
(the loop stops every tree at once: SIGTERM, one bounded wait, SIGKILL). Every child is
stopped before ``execute`` returns and every job has a result (docs/running.md, The executor).
"""

from __future__ import annotations

import hashlib
import os
import re
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from simpler.contract import NO_DEVICE_SPEC, RETIRED_NOT_RUN
from simpler.contract.child import devices_value
from simpler.contract.settings import DEVICES_ENV
from simpler.devices import format_devices
from simpler.processes.locks import DeviceLocks
from simpler.processes.process import (
    CHILD_EXITED,
    ChildProcess,
    Launcher,
    signal_name,
    stop_trees,
)
from simpler.scheduler.jobs import Job, JobResult, Running
from simpler.scheduler.policies import order_jobs, pick, unfittable

__all__ = ["Execution", "ExecutorOptions", "execute", "log_name"]

POLL_S = 0.02
NOT_RUN_RC = None


@dataclass
class ExecutorOptions:
    estimate: Callable[[Job], float]
    policy: str = "backfill"
    job_timeout_s: float | None = None
    session_timeout_s: float | None = None
    exit_first: bool = False
    tail_lines: int = 80
    log_dir: Path = Path(".simpler/logs")
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    locks: DeviceLocks | None = None
    on_start: Callable[[Job, tuple[int, ...]], None] | None = None
    on_finish: Callable[[JobResult], None] | None = None
    # After each result: the devices retired from the rest of the run (their worker is
    # beyond reset), which take no other job.
    retire: Callable[[JobResult], list[int]] | None = None
    # Devices of the pool already retired when the phase starts: they take no job.
    retired_at_start: Sequence[int] = ()
    # Seconds from now when every job must be over (the run's deadline): no job starts that
    # its estimate says cannot end by then, and what runs then is stopped. Such a job's
    # result carries ``extra["deadline"]``.
    deadline_s: float | None = None
    # A job's duration as the deadline judges it: only what is known (measured, or the job's
    # own estimate) keeps it from starting; None: ``estimate``.
    deadline_estimate: Callable[[Job], float] | None = None
    # The most processes at once (-j), devices apart: a job of 0 devices takes any free slot,
    # a device job a slot and its devices; None: as many as the devices allow.
    slots: int | None = None
    launcher: Launcher | None = None  # how a child starts; None: a fresh interpreter


@dataclass
class Execution:
    results: list[JobResult]
    retired: list[int]
    stopped_by: str | None = None  # "exit_first", "session_timeout", "SIGTERM", "SIGINT"
    most_at_once: int = 0  # the most children that ran at the same time

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results) and self.stopped_by is None


@dataclass
class _Active:
    child: ChildProcess
    running: Running
    log: Path
    stopped_at_deadline: bool = False


def log_name(label: str) -> str:
    """A file name for ``label``'s log: readable, and unique even after cleaning."""
    clean = re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("_") or "job"
    if clean == label and len(clean) <= 120:
        return f"{clean}.log"
    digest = hashlib.sha1(label.encode()).hexdigest()[:8]
    return f"{clean[:120]}-{digest}.log"


def execute(jobs: Sequence[Job], devices: Sequence[int], options: ExecutorOptions) -> Execution:
    too_big = unfittable(jobs, len(devices))
    if too_big:
        names = ", ".join(f"{j.label} ({j.devices})" for j in too_big)
        raise ValueError(f"job(s) need more devices than the pool of {len(devices)}: {names}")
    return _Loop(jobs, devices, options).run()


class _Loop:
    def __init__(self, jobs: Sequence[Job], devices: Sequence[int], options: ExecutorOptions):
        self.options = options
        self.waiting = order_jobs(jobs, options.policy, options.estimate, len(devices))
        self.pool = list(devices)
        self.retired: set[int] = set(options.retired_at_start) & set(devices)
        self.free = set(devices) - self.retired
        self.active: list[_Active] = []
        self.results: list[JobResult] = []
        self.stopped_by: str | None = None
        self.signalled: str | None = None  # set by the handler, acted on by the loop
        self.locks = options.locks or DeviceLocks()
        self.started = time.monotonic()
        self.most_at_once = 0

    def run(self) -> Execution:
        previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
        for signum in previous:
            signal.signal(signum, self._on_signal)
        try:
            while self.waiting or self.active:
                CHILD_EXITED.clear()  # an exit from now on cuts the wait below short
                if self.signalled is not None and self.stopped_by != self.signalled:
                    self.stopped_by = self.signalled
                    self._stop(self.active)
                # Reap first: a device freed in this pass takes its next job at once,
                # not one poll later.
                self._reap()
                if self.stopped_by is None:
                    self._start_what_fits()
                self._enforce_timeouts()
                if self.stopped_by is not None:
                    self._abandon_waiting()
                CHILD_EXITED.wait(POLL_S)
        finally:
            self._stop(self.active)
            for active in list(self.active):
                self._finish(active)
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            self.locks.release_all()
        if self.signalled is not None:  # it came as the last job ended: it still stops the run
            self.stopped_by = self.signalled
        return Execution(self.results, sorted(self.retired), self.stopped_by, self.most_at_once)

    def _now(self) -> float:
        return time.monotonic() - self.started

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        # Only note it (the first one): the loop stops starting and stops what runs.
        if self.signalled is None:
            self.signalled = signal.Signals(signum).name

    @staticmethod
    def _stop(actives: list[_Active], *, dump: bool = False) -> None:
        stop_trees([active.child for active in actives], dump=dump)

    def _start_what_fits(self) -> None:
        self._drop_jobs_that_can_never_fit()
        self._drop_jobs_past_the_deadline()
        on_devices = [job for job in self.waiting if job.devices]
        if on_devices and self._slots_free() > 0:
            available = sorted(d for d in self.free if self.locks.try_acquire([d]))
            running = [a.running for a in self.active if a.running.job.devices]
            chosen = pick(
                self.options.policy,
                on_devices,
                available,
                running,
                self._now(),
                self.options.estimate,
            )
            for job, ids in chosen[: self._slots_free()]:
                self.waiting.remove(job)
                self.free.difference_update(ids)
                self._start(job, ids)
        anywhere = [job for job in self.waiting if not job.devices]
        for job in anywhere[: self._slots_free()]:
            self.waiting.remove(job)
            self._start(job, ())
        self.most_at_once = max(self.most_at_once, len(self.active))

    def _slots_free(self) -> int:
        """Slots no child holds. Device jobs are started first in every pass, just after the
        children that ended were reaped, so a card never waits for a slot that a job of no
        device took while it was busy."""
        if self.options.slots is None:
            return len(self.waiting)  # no budget but the devices
        return max(0, self.options.slots - len(self.active))

    def _start(self, job: Job, ids: tuple[int, ...]) -> None:
        spec = format_devices(list(ids)) if ids else NO_DEVICE_SPEC
        log = self.options.log_dir / log_name(job.label)
        env = {**self.options.env, **dict(job.env)}
        env[DEVICES_ENV] = devices_value(ids)  # a pytest of the run reads its devices here
        if self.options.on_start:
            self.options.on_start(job, ids)
        child = ChildProcess(
            job.command_for(spec),
            env=env,
            log_path=log,
            tail_lines=self.options.tail_lines,
            launcher=self.options.launcher,
        )
        now = self._now()
        running = Running(job, ids, now, now + self.options.estimate(job))
        self.active.append(_Active(child, running, log))

    def _reap(self) -> None:
        for active in [a for a in self.active if a.child.poll() is not None]:
            self._finish(active)

    def _finish(self, active: _Active) -> None:
        returncode = active.child.wait()
        self.active.remove(active)
        job, ids = active.running.job, active.running.devices
        end = self._now()
        result = JobResult(
            label=job.label,
            returncode=returncode if returncode >= 0 else None,
            signal=signal_name(returncode),
            devices=list(ids),
            duration_s=round(end - active.running.started_s, 3),
            timed_out=active.child.timed_out,
            reached_summary=active.child.reached_summary,
            tail=active.child.tail,
            log=str(active.log),
            nodeid=job.nodeid,
            start_s=round(active.running.started_s, 3),
            end_s=round(end, 3),
            pid=active.child.pid,
            extra=self._stop_marks(deadline=active.stopped_at_deadline),
        )
        self.results.append(result)
        if self.options.retire:
            self.retired.update(d for d in self.options.retire(result) if d in ids)
        self.free.update(d for d in ids if d not in self.retired)
        if self.options.on_finish:
            self.options.on_finish(result)
        if self.options.exit_first and not result.ok and self.stopped_by is None:
            self.stopped_by = "exit_first"
            self._stop(self.active)

    def _enforce_timeouts(self) -> None:
        now = self._now()
        session = self.options.session_timeout_s
        deadline = self.options.deadline_s
        if deadline is not None and now > deadline and self.stopped_by is None:
            self.stopped_by = "deadline"
            for active in self.active:
                active.stopped_at_deadline = True
            self._stop(self.active, dump=True)
            return
        if session is not None and now > session and self.stopped_by is None:
            self.stopped_by = "session_timeout"
            late = list(self.active)
        else:
            late = [a for a in self.active if self._late(a, now) and not a.child.timed_out]
        for active in late:
            active.child.timed_out = True
        self._stop(late, dump=True)

    def _late(self, active: _Active, now: float) -> bool:
        limit = active.running.job.timeout_s or self.options.job_timeout_s
        return limit is not None and now - active.running.started_s > limit

    def _abandon_waiting(self) -> None:
        deadline = self.stopped_by == "deadline"
        for job in self.waiting:
            self._not_run(job, f"not run: stopped by {self.stopped_by}", deadline=deadline)
        self.waiting.clear()

    def _stop_marks(self, *, deadline: bool) -> dict[str, object]:
        """What stopped a job from outside: the deadline, or a signal to the orchestrator
        (``interrupted``): its test is not run, and its child is no failure of its own."""
        marks: dict[str, object] = {"deadline": True} if deadline else {}
        if self.signalled is not None:
            marks["interrupted"] = self.signalled
        return marks

    def _drop_jobs_past_the_deadline(self) -> None:
        deadline = self.options.deadline_s
        if deadline is None:
            return
        left = deadline - self._now()
        judge = self.options.deadline_estimate or self.options.estimate
        for job in [j for j in self.waiting if judge(j) > left]:
            self.waiting.remove(job)
            self._not_run(job, "not run: cannot end before the deadline", deadline=True)

    def _drop_jobs_that_can_never_fit(self) -> None:
        usable = len(self.pool) - len(self.retired)
        for job in [j for j in self.waiting if j.devices > usable]:
            self.waiting.remove(job)
            self._not_run(
                job,
                f"not run: only {usable} {RETIRED_NOT_RUN} "
                f"(retired: {format_devices(sorted(self.retired))})",
            )

    def _not_run(self, job: Job, reason: str, *, deadline: bool = False) -> None:
        result = JobResult(
            label=job.label,
            returncode=NOT_RUN_RC,
            signal=None,
            devices=[],
            duration_s=0.0,
            reached_summary=False,
            tail=reason,
            nodeid=job.nodeid,
            start_s=self._now(),
            end_s=self._now(),
            extra={"not_run": reason, **self._stop_marks(deadline=deadline)},
        )
        self.results.append(result)
        if self.options.on_finish:
            self.options.on_finish(result)
