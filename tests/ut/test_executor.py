"""The executor on real processes: devices, logs, timeouts, crashes, locks, early stops."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType

import psutil
import pytest

from simpler.processes import executor
from simpler.processes.executor import ExecutorOptions, execute
from simpler.processes.locks import DeviceLocks
from simpler.scheduler.jobs import Job

PY = sys.executable


def _job(label: str, code: str, devices: int = 1, **extra: object) -> Job:
    return Job(label, devices, (PY, "-c", code, "{devices}"), **extra)  # type: ignore[arg-type]


def _options(tmp_path: Path, **overrides: object) -> ExecutorOptions:
    base: dict[str, object] = {
        "estimate": lambda job: job.est_s or 1.0,
        "log_dir": tmp_path / "logs",
        "locks": DeviceLocks(tmp_path / "locks"),
    }
    return ExecutorOptions(**{**base, **overrides})  # type: ignore[arg-type]


SHOW_DEVICES = "import os, sys; print('devices', sys.argv[1], os.environ['SIMPLER_DEVICES'])"


def test_every_job_runs_once_on_its_own_devices_and_logs_its_output(tmp_path: Path) -> None:
    jobs = [_job(f"j{i}", SHOW_DEVICES, devices=1 + i % 2) for i in range(6)]
    execution = execute(jobs, [0, 1, 2], _options(tmp_path))
    assert execution.ok and sorted(r.label for r in execution.results) == sorted(
        j.label for j in jobs
    )
    for result in execution.results:
        spec = ",".join(map(str, result.devices))
        log = Path(result.log).read_text()
        assert (
            f"devices {spec.replace(',', '-') if len(result.devices) > 1 else spec} {spec}" in log
        )
        assert result.tail.startswith("devices")
    spans = sorted((r.start_s, r.end_s, set(r.devices)) for r in execution.results)
    for i, (_, end, ids) in enumerate(spans):
        for other_start, _, other_ids in spans[i + 1 :]:
            assert other_start >= end or not ids & other_ids, "a device was double-booked"


HANG_WITH_GRANDCHILD = (
    "import faulthandler, signal, subprocess, sys, time\n"
    "faulthandler.register(signal.SIGUSR1, all_threads=True)\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
    "print('grandchild', child.pid, flush=True)\n"
    "time.sleep(120)\n"
)


def _grandchild_pid(log: str) -> int:
    return int(next(line.split()[1] for line in log.splitlines() if line.startswith("grandchild")))


def _clock_runs_out_once_logged(monkeypatch: pytest.MonkeyPatch, log: Path, line: str) -> None:
    """The executor's clock stands still until ``log`` holds ``line``, then jumps a day on:
    a job's time runs out once it is ready, however slowly this machine starts it."""

    def now(_loop: object) -> float:
        return 86400.0 if log.exists() and line in log.read_text() else 0.0

    monkeypatch.setattr(executor._Loop, "_now", now)


def test_a_job_past_its_timeout_is_dumped_then_stopped_with_its_whole_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = _job("hang", HANG_WITH_GRANDCHILD, timeout_s=1.0)
    _clock_runs_out_once_logged(monkeypatch, tmp_path / "logs" / "hang.log", "grandchild")
    (result,) = execute([job], [0], _options(tmp_path)).results
    log = Path(result.log).read_text()
    assert result.timed_out and not result.ok
    assert "most recent call first" in log  # faulthandler's stack dump, before the kill
    assert not psutil.pid_exists(_grandchild_pid(log)) or (
        psutil.Process(_grandchild_pid(log)).status() == psutil.STATUS_ZOMBIE
    )


def test_a_crash_is_named_by_its_signal(tmp_path: Path) -> None:
    job = _job("segv", "import os, signal; print('start', flush=True); os.kill(os.getpid(), 11)")
    (result,) = execute([job], [0], _options(tmp_path)).results
    assert (result.returncode, result.signal) == (None, "SIGSEGV")
    assert not result.reached_summary and result.tail == "start"


def test_reached_summary_is_true_only_after_pytests_closing_line(tmp_path: Path) -> None:
    done = _job("done", "print('==== 3 passed, 1 skipped in 0.52s ====')")
    quiet = _job("quiet", "print('3 passed in 0.10s')")
    died = _job("died", "print('collected 3 items'); raise SystemExit(1)")
    results = {r.label: r for r in execute([done, quiet, died], [0], _options(tmp_path)).results}
    assert results["done"].reached_summary and results["quiet"].reached_summary
    assert not results["died"].reached_summary


def test_exit_first_stops_the_others_and_leaves_the_rest_unrun(tmp_path: Path) -> None:
    jobs = [
        _job("fails", "raise SystemExit(3)", est_s=5.0),
        _job("slow", "import time; time.sleep(60)", est_s=4.0),
        _job("later", "pass", est_s=1.0),
    ]
    execution = execute(jobs, [0, 1], _options(tmp_path, exit_first=True))
    results = {r.label: r for r in execution.results}
    assert execution.stopped_by == "exit_first"
    assert results["fails"].returncode == 3
    assert results["slow"].signal == "SIGTERM"
    assert results["later"].extra["not_run"].startswith("not run: stopped by exit_first")


def test_the_session_timeout_stops_everything_and_still_returns_every_result(
    tmp_path: Path,
) -> None:
    """Every job has its result: one that was running when the timeout came is timed out,
    one that never started is not run (two devices: the third job never starts)."""
    jobs = [_job(f"s{i}", "import time; time.sleep(60)") for i in range(3)]
    execution = execute(jobs, [0, 1], _options(tmp_path, session_timeout_s=1.0))
    assert execution.stopped_by == "session_timeout"
    assert sorted(r.label for r in execution.results) == ["s0", "s1", "s2"]
    never = [r for r in execution.results if "not run" in r.extra.get("not_run", "")]
    started = [r for r in execution.results if r not in never]
    assert len(never) >= 1 and len(started) <= 2
    assert all(r.timed_out and r.returncode != 0 for r in started)


def test_a_retired_device_takes_no_more_jobs(tmp_path: Path) -> None:
    """ "poisons" ends on device 0 and retires it, while "holder" keeps device 1 until then:
    the jobs queued behind them could take device 0 first, and must not."""
    ended = tmp_path / "poisons-ended"
    poisons = f"import pathlib; pathlib.Path({str(ended)!r}).touch()"
    holder = (  # the event is the file; the deadline only guards against a hang
        f"import pathlib, time\ndeadline = time.monotonic() + 60\n"
        f"while not pathlib.Path({str(ended)!r}).exists() and time.monotonic() < deadline:\n"
        f"    time.sleep(0.01)\n"
    )
    jobs = [_job("poisons", poisons), _job("holder", holder)]
    jobs += [_job(f"n{i}", "pass") for i in range(3)]
    jobs.append(_job("needs-two", "pass", devices=2, est_s=0.5))

    def retire(result: object) -> list[int]:
        return [0] if getattr(result, "label", "") == "poisons" else []

    # fifo: the submission order decides, so "poisons" and "holder" surely start first.
    options = _options(tmp_path, retire=retire, policy="fifo")
    execution = execute(jobs, [0, 1], options)
    results = {r.label: r for r in execution.results}
    assert execution.retired == [0]
    assert results["poisons"].devices == [0] and results["holder"].devices == [1]
    assert all(results[f"n{i}"].devices == [1] for i in range(3))
    assert results["needs-two"].extra["not_run"].startswith("not run: only 1 device(s) left")


class _OtherRunLeavesOnceRefused(DeviceLocks):
    """Our locks; another run holds device 0 until we are first turned away from it."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.other_run = DeviceLocks(directory)
        assert self.other_run.try_acquire([0])
        self.refused = False

    def try_acquire(self, devices: tuple[int, ...] | list[int]) -> bool:
        taken = super().try_acquire(devices)
        if not taken and not self.refused:
            self.refused = True
            self.other_run.release_all()
        return taken


def test_a_device_locked_by_another_run_is_waited_for_never_shared(tmp_path: Path) -> None:
    locks = _OtherRunLeavesOnceRefused(tmp_path / "locks")
    held_by_the_other_run_at_start: list[list[int]] = []
    options = _options(
        tmp_path,
        locks=locks,
        on_start=lambda job, ids: held_by_the_other_run_at_start.append(locks.other_run.held()),
    )
    (result,) = execute([_job("two", SHOW_DEVICES, devices=2)], [0, 1], options).results
    assert result.ok and result.devices == [0, 1]
    assert locks.refused  # it did find device 0 taken
    assert held_by_the_other_run_at_start == [[]]  # and started only once the other run let go


def test_a_job_larger_than_the_pool_is_refused_before_anything_starts(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    jobs = [_job("small", f"open({str(marker)!r}, 'w')"), _job("huge", "pass", devices=3)]
    with pytest.raises(ValueError, match=r"huge \(3\)"):
        execute(jobs, [0, 1], _options(tmp_path))
    assert not marker.exists()


def test_the_log_is_written_while_the_child_runs(tmp_path: Path) -> None:
    # The child cannot end before the test has read its first line in the log.
    seen, log = tmp_path / "seen", tmp_path / "logs" / "streams.log"
    code = (
        "import os, time\n"
        "print('first line', flush=True)\n"
        f"while not os.path.exists({str(seen)!r}):\n"
        "    time.sleep(0.01)\n"
    )
    log_seen: list[str] = []

    def read_the_log_while_it_runs() -> None:
        deadline = time.monotonic() + 60  # only guards against a line that never comes
        while time.monotonic() < deadline and not log_seen:
            text = log.read_text() if log.exists() else ""
            if text:
                log_seen.append(text)
            time.sleep(0.01)
        seen.touch()  # lets the child end, seen or not

    reader = threading.Thread(target=read_the_log_while_it_runs)
    reader.start()
    execute([_job("streams", code)], [0], _options(tmp_path))
    reader.join()
    assert log_seen == ["first line\n"]


def test_results_serialize_to_json(tmp_path: Path) -> None:
    (result,) = execute([_job("plain", "pass")], [3], _options(tmp_path)).results
    assert json.loads(json.dumps(result.serialize()))["devices"] == [3]


def test_a_signal_is_only_noted_then_the_loop_stops_every_child_and_starts_nothing(
    tmp_path: Path,
) -> None:
    def own_handler(_signum: int, _frame: FrameType | None) -> None:
        raise AssertionError("the test's own SIGTERM handler ran")

    previous = signal.signal(signal.SIGTERM, own_handler)
    jobs = [_job(f"long{i}", "import time; time.sleep(600)", est_s=5.0) for i in range(2)]
    jobs.append(_job("never", "pass", est_s=1.0))
    started: list[str] = []

    def on_start(job: Job, _ids: tuple[int, ...]) -> None:
        started.append(job.label)
        if len(started) == 2:
            os.kill(os.getpid(), signal.SIGTERM)  # the executor's handler takes it

    try:
        execution = execute(jobs, [0, 1], _options(tmp_path, on_start=on_start))
        restored = signal.getsignal(signal.SIGTERM)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert execution.stopped_by == "SIGTERM" and not execution.ok
    results = {r.label: r for r in execution.results}
    # Stopped, not waited for: each would have slept ten minutes.
    assert results["long0"].signal == results["long1"].signal == "SIGTERM"
    assert results["never"].extra["not_run"] == "not run: stopped by SIGTERM"
    assert restored is own_handler


def test_at_the_deadline_what_runs_is_stopped_and_what_cannot_end_in_time_never_starts(
    tmp_path: Path,
) -> None:
    running = [_job(f"run{i}", "import time; time.sleep(60)", est_s=0.5) for i in range(2)]
    too_long = _job("too-long", "print('must not start')", est_s=600.0)
    execution = execute([*running, too_long], [0, 1, 2], _options(tmp_path, deadline_s=1.0))
    results = {r.label: r for r in execution.results}
    assert execution.stopped_by == "deadline"
    assert all(results[j.label].extra.get("deadline") for j in running)
    assert not any(results[j.label].timed_out for j in running)  # not their own timeouts
    assert results["too-long"].extra == {
        "not_run": "not run: cannot end before the deadline",
        "deadline": True,
    }
    assert not (tmp_path / "logs" / "too-long.log").exists()
