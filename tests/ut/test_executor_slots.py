"""The executor's two budgets on real processes: ``slots`` bounds the children at once, the
devices bound what uses a device (never shared), and a job of no device takes any free slot."""

from __future__ import annotations

import sys
from pathlib import Path

from simpler.contract import NO_DEVICE_SPEC
from simpler.processes.executor import ExecutorOptions, execute
from simpler.processes.locks import DeviceLocks
from simpler.scheduler.jobs import Job, JobResult

PY = sys.executable
SHOW_DEVICES = "import os, sys; print('devices', sys.argv[1], os.environ['SIMPLER_DEVICES'])"


def _job(label: str, code: str, devices: int, est_s: float = 1.0) -> Job:
    return Job(label, devices, (PY, "-c", code, "{devices}"), est_s=est_s)


def _options(tmp_path: Path, slots: int) -> ExecutorOptions:
    return ExecutorOptions(
        estimate=lambda job: job.est_s or 1.0,
        log_dir=tmp_path / "logs",
        locks=DeviceLocks(tmp_path / "locks"),
        slots=slots,
    )


def _waits_for(mine: Path, other: Path) -> str:
    """Mark ``mine`` started, then end only once ``other`` has started too (exit 1 after 60 s:
    the two never ran together)."""
    return (
        "import os, sys, time\n"
        f"open({str(mine)!r}, 'w').close()\n"
        "end = time.monotonic() + 60\n"
        f"while not os.path.exists({str(other)!r}):\n"
        "    if time.monotonic() > end: sys.exit(1)\n"
        "    time.sleep(0.01)\n"
    )


def _most_at_once(results: list[JobResult], which: set[str] | None = None) -> int:
    spans = [(r.start_s, r.end_s) for r in results if which is None or r.label in which]
    return max(sum(1 for s, e in spans if s <= start < e) for start, _ in spans)


def test_one_card_two_slots_a_job_of_no_device_runs_beside_the_cards(tmp_path: Path) -> None:
    card, free = tmp_path / "card-started", tmp_path / "free-started"
    jobs = [
        _job("on the card", _waits_for(card, free), 1),
        _job("anywhere", _waits_for(free, card), 0),
    ]
    execution = execute(jobs, [0], _options(tmp_path, slots=2))
    assert execution.ok, [r.tail for r in execution.results]  # neither waited out its 60 s
    assert execution.most_at_once == 2
    results = {r.label: r for r in execution.results}
    assert results["on the card"].devices == [0] and results["anywhere"].devices == []


def test_the_slots_bound_the_processes_and_the_card_is_never_shared(tmp_path: Path) -> None:
    on_card = {f"card{i}" for i in range(3)}
    jobs = [_job(label, SHOW_DEVICES, 1) for label in sorted(on_card)]
    jobs += [_job(f"free{i}", SHOW_DEVICES, 0) for i in range(6)]
    execution = execute(jobs, [0], _options(tmp_path, slots=3))
    assert execution.ok and len(execution.results) == 9
    assert 1 <= execution.most_at_once <= 3
    assert _most_at_once(execution.results) <= 3
    assert _most_at_once(execution.results, on_card) == 1  # one card: one at a time
    for result in execution.results:
        log = Path(result.log).read_text()
        if result.label in on_card:
            assert "devices 0 0" in log
        else:  # told it holds no device, in argv and environment alike
            assert f"devices {NO_DEVICE_SPEC} {NO_DEVICE_SPEC}" in log and result.devices == []


def test_jobs_of_no_device_leave_the_card_a_slot_while_its_jobs_wait(tmp_path: Path) -> None:
    """Two slots, one card, three card jobs queued, and jobs of no device that end only once
    every card job has: had they taken both slots, no card job could start (each would wait
    out its 20 s and fail)."""
    marks = [tmp_path / f"card{i}" for i in range(3)]
    jobs = [_job(f"card{i}", f"open({str(mark)!r}, 'w').close()", 1, est_s=0.1)
            for i, mark in enumerate(marks)]  # fmt: skip
    waits = (
        "import os, sys, time\n"
        "end = time.monotonic() + 20\n"
        f"while not all(os.path.exists(m) for m in {[str(m) for m in marks]!r}):\n"
        "    if time.monotonic() > end: sys.exit(1)\n"
        "    time.sleep(0.01)\n"
    )
    jobs += [_job(f"free{i}", waits, 0, est_s=5.0) for i in range(3)]
    execution = execute(jobs, [0], _options(tmp_path, slots=2))
    assert execution.ok, [(r.label, r.returncode) for r in execution.results]


def test_without_slots_only_the_devices_bound_the_jobs(tmp_path: Path) -> None:
    jobs = [_job(f"card{i}", "pass", 1) for i in range(4)]
    options = _options(tmp_path, slots=1)
    options.slots = None
    execution = execute(jobs, [0, 1], options)
    assert execution.ok and 1 <= execution.most_at_once <= 2
    assert _most_at_once(execution.results) <= 2
