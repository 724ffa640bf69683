"""Leftover processes (subreaper, sweep, the summary's line) and the run's signal handler."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

import psutil
import pytest

from simpler.orchestrator import run as run_module
from simpler.orchestrator.context import RunContext, RunSetup
from simpler.orchestrator.options import RunOptions
from simpler.orchestrator.signals import Interrupted, signals_raise_interrupted
from simpler.processes.reaper import is_child_subreaper
from simpler.reporting.notices import leftover_lines
from simpler.reporting.records import from_dict

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")

# Starts `sleep` in a session of its own from a process that exits at once: an orphan.
ORPHAN_CODE = (
    "import subprocess; print(subprocess.Popen(['sleep', '600'], start_new_session=True, "
    "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)"
)
ORPHAN = (
    "import subprocess, sys\n"
    "def orphan():\n"
    f"    return int(subprocess.run([sys.executable, '-c', {ORPHAN_CODE!r}],\n"
    "                              capture_output=True, text=True, check=True).stdout)\n"
)


def _orphan() -> int:
    done = subprocess.run(
        [sys.executable, "-c", ORPHAN_CODE], capture_output=True, text=True, timeout=30, check=True
    )
    return int(done.stdout)


def _script(body: str) -> dict[str, object]:
    """Run ``body`` in a fresh interpreter (its descendants are its own); its JSON answer."""
    code = ORPHAN + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )
    answer: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@linux_only
def test_a_subreaper_adopts_an_orphan_in_a_new_session_and_the_sweep_stops_it() -> None:
    answer = _script(
        """
        import json, os, psutil
        from simpler.processes.reaper import child_subreaper, is_child_subreaper, stop_leftovers
        with child_subreaper() as adopting:
            pid = orphan()
            parent = psutil.Process(pid).ppid()
            stopped = [s.as_dict() for s in stop_leftovers()]
        print(json.dumps({"adopting": adopting, "pid": pid, "adopted": parent == os.getpid(),
                          "stopped": stopped, "after": is_child_subreaper()}))
        """
    )
    pid = answer["pid"]
    assert answer["adopting"] and answer["adopted"] and answer["after"] is False
    this_test = os.environ["PYTEST_CURRENT_TEST"].rpartition(" (")[0]  # it started the orphan
    assert answer["stopped"] == [
        {
            "pid": pid,
            "name": "sleep",
            "cmdline": "sleep 600",
            "test": this_test,
            "signal": "SIGTERM",
        }
    ]
    assert isinstance(pid, int) and _gone(pid)


@linux_only
def test_the_sweep_never_touches_a_process_that_is_not_a_descendant() -> None:
    answer = _script(
        """
        import json
        from simpler.processes.reaper import stop_leftovers
        pid = orphan()  # no subreaper here: it goes to init (or some ancestor), not to us
        print(json.dumps({"pid": pid, "stopped": [s.pid for s in stop_leftovers()]}))
        """
    )
    pid = answer["pid"]
    assert isinstance(pid, int)
    try:
        assert answer["stopped"] == [] and not _gone(pid)
    finally:
        os.kill(pid, signal.SIGKILL)


def test_a_leftover_that_ignores_sigterm_gets_sigkill_and_kept_processes_are_spared() -> None:
    answer = _script(
        """
        import json, subprocess, sys, time
        from simpler.processes.reaper import stop_leftovers
        stubborn = subprocess.Popen([sys.executable, "-c",
            "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "print('ready', flush=True); time.sleep(600)"], stdout=subprocess.PIPE, text=True)
        stubborn.stdout.readline()
        kept = subprocess.Popen(["sleep", "600"])
        stopped = [(s.pid, s.signal) for s in stop_leftovers(keep={kept.pid}, grace_s=0.5)]
        alive = kept.poll() is None
        kept.kill()
        kept.wait()
        print(json.dumps({"stopped": stopped, "expected": [[stubborn.pid, "SIGKILL"]],
                          "kept_alive": alive}))
        """
    )
    assert answer["stopped"] == answer["expected"] and answer["kept_alive"]


def test_the_summary_names_every_leftover_and_the_test_that_started_it() -> None:
    process = {"pid": 42, "name": "sleep", "cmdline": "sleep 600", "signal": "SIGTERM"}
    records = [
        from_dict({"type": "leftover", "processes": [{**process, "test": "t.py::test_a"}]}),
        from_dict(
            {"type": "leftover", "processes": [{**process, "pid": 43, "name": "srv", "test": None}]}
        ),
        from_dict({"type": "quarantine", "devices": [1]}),
        from_dict({"type": "leftover", "processes": "not a list"}),
    ]
    assert leftover_lines(records) == [
        "*** 2 leftover process(es) killed: sleep (42), srv (43) ***",
        "  sleep (42) was started during t.py::test_a: sleep 600",
    ]
    assert leftover_lines([from_dict({"type": "test"})]) == []


@pytest.fixture
def own_handlers() -> Iterator[dict[int, Callable[[int, FrameType | None], None]]]:
    """Handlers of the test's own for SIGTERM and SIGINT: whatever takes them over must give
    these very objects back."""

    def on_sigterm(_signum: int, _frame: FrameType | None) -> None:
        raise AssertionError("the test's own SIGTERM handler ran")

    def on_sigint(_signum: int, _frame: FrameType | None) -> None:
        raise AssertionError("the test's own SIGINT handler ran")

    ours = {signal.SIGTERM: on_sigterm, signal.SIGINT: on_sigint}
    before = {signum: signal.signal(signum, handler) for signum, handler in ours.items()}
    yield ours
    for signum, handler in before.items():
        signal.signal(signum, handler)


def _signal_this_process(signum: int) -> None:
    # raise_signal runs the Python handler before it returns (CPython checks pending signals
    # right after raise()): the test needs no wait for it.
    signal.raise_signal(signum)


def test_the_handler_raises_once_then_only_records(
    own_handlers: dict[int, Callable[[int, FrameType | None], None]],
) -> None:
    with signals_raise_interrupted() as signals:
        with pytest.raises(Interrupted) as caught:
            _signal_this_process(signal.SIGTERM)
        assert caught.value.exit_code == 143 and str(caught.value) == "SIGTERM"
        _signal_this_process(signal.SIGINT)  # a second signal: recorded, never raised
        assert signals.received == signal.SIGTERM
        assert signals.interrupted is not None and signals.interrupted.exit_code == 143
    assert signal.getsignal(signal.SIGTERM) is own_handlers[signal.SIGTERM]
    assert signal.getsignal(signal.SIGINT) is own_handlers[signal.SIGINT]


def test_after_the_tests_a_signal_is_recorded_not_raised() -> None:
    with signals_raise_interrupted() as signals:
        signals.stop_raising()
        _signal_this_process(signal.SIGINT)
        assert signals.interrupted is not None and signals.interrupted.exit_code == 130


def _run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **phases: object
) -> tuple[int, RunContext]:
    table = {name: phases.get(name, lambda ctx: 0) for name in run_module.PHASES}
    monkeypatch.setattr(run_module, "PHASES", table)
    ctx = RunContext(RunSetup(RunOptions("a5sim", "0", "l2"), [0], tmp_path / "r.jsonl", "r1"))
    return run_module.run_phases(ctx, [n for n in run_module.PHASES if n in phases])


@linux_only
def test_the_run_kills_what_a_phase_left_behind_before_the_report_reads_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    left: list[int] = []
    printed: list[str] = []
    was_subreaper = is_child_subreaper()
    code = _run(
        monkeypatch,
        tmp_path,
        resource=lambda ctx: left.append(_orphan()) or 0,
        report=lambda ctx: printed.extend(leftover_lines(ctx.records())) or 0,
    )
    assert code == 0  # reported, not a failure
    assert printed[0] == f"*** 1 leftover process(es) killed: sleep ({left[0]}) ***"
    assert _gone(left[0]) and is_child_subreaper() == was_subreaper


def test_an_interrupted_run_still_reports_and_exits_128_plus_the_signal(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    own_handlers: dict[int, Callable[[int, FrameType | None], None]],
) -> None:
    ran: list[str] = []

    def interrupted(ctx: RunContext) -> int:
        ran.append("l2")
        raise Interrupted(signal.SIGTERM)

    code = _run(
        monkeypatch,
        tmp_path,
        l2=interrupted,
        resource=lambda ctx: ran.append("resource") or 0,
        report=lambda ctx: ran.append("report") or 0,
    )
    assert (code, ran) == (143, ["l2", "report"])
    assert signal.getsignal(signal.SIGTERM) is own_handlers[signal.SIGTERM]
    assert signal.getsignal(signal.SIGINT) is own_handlers[signal.SIGINT]
