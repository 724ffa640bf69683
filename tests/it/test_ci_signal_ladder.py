"""GitHub Actions' ladder against the workflow's own session step: on a timeout or a cancel,
Actions sends SIGINT to the step's shell alone, SIGTERM 7.5 s later, and kills the process
tree 2.5 s after that. The step must hand the signal to simpler, which must print its partial
summary (the tests it never ran counted) before the kill, and the step must exit 130."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "ci.yml"
SIGTERM_AFTER_S = 7.5  # Actions' own ladder
KILL_AFTER_S = 2.5
HELD = "test_a_single_column_is_certain"


def _session_step_command() -> str:
    """The `run:` of the workflow's session step, as the workflow has it."""
    text = WORKFLOW.read_text()
    step = text.split("- name: nox -s ${{ matrix.session }}", 1)[1]
    found = re.search(r"^\s+run: (.+)$", step, re.MULTILINE)
    assert found is not None, "the session step has a one-line run command"
    return found.group(1)


def _as_a_runner_starts_a_step() -> None:
    """SIGINT handled by default, as the Actions runner starts a step's shell: a test run from
    a background job (`cmd &` ignores SIGINT, and every child inherits that) must not hand the
    step a shell that cannot trap the signal its ladder begins with."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _l2_started(report: Path) -> bool:
    if not report.exists():
        return False
    for line in report.read_text().splitlines():
        record = json.loads(line) if line.strip() else {}
        if record.get("type") == "test" and record.get("phase") == "l2":
            return True
    return False


def _ladder(shell: subprocess.Popen[bytes]) -> None:
    """What Actions does to a step it cancels: SIGINT, SIGTERM, then the tree killed."""
    shell.send_signal(signal.SIGINT)
    for signum, grace in ((signal.SIGTERM, SIGTERM_AFTER_S), (signal.SIGKILL, KILL_AFTER_S)):
        try:
            shell.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            pass
        if signum == signal.SIGKILL:
            tree = psutil.Process(shell.pid).children(recursive=True)
            for process in [psutil.Process(shell.pid), *tree]:
                process.kill()
        else:
            shell.send_signal(signum)
    shell.wait()


def test_a_cancelled_step_prints_the_partial_summary_and_exits_130(tmp_path: Path) -> None:
    command = _session_step_command()
    assert command.startswith("bash scripts/ci_step.sh ")
    report = tmp_path / "report.jsonl"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SIMPLER_", "COVERAGE_"))},
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "SESSION": "st_a5",
        "SIMPLER_REPORT": str(report),
        "SIMPLER_LOCK_DIR": os.environ.get("SIMPLER_LOCK_DIR", str(tmp_path)),
        "SIMPLER_OP_TIMEOUT_MS": os.environ.get("SIMPLER_OP_TIMEOUT_MS", "150"),
        # One L2 test waits for the signal (tests/it/hold_one_test.py): the run cannot end
        # before it, however fast or loaded this machine is.
        "PYTEST_ADDOPTS": "-p hold_one_test",
        "PYTHONPATH": str(Path(__file__).resolve().parent),
        "HOLD_ONE_TEST": HELD,
    }
    # The step's log goes where the workflow puts it; the test's own folder stands for .simpler.
    command = command.replace(".simpler/nox-", f"{tmp_path}/nox-")
    shell = subprocess.Popen(["bash", "-c", command], cwd=ROOT, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             preexec_fn=_as_a_runner_starts_a_step)  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not _l2_started(report) and shell.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert shell.poll() is None, "the session ended before it could be cancelled"
        _ladder(shell)
    finally:
        if shell.poll() is None:
            shell.kill()
    log = (tmp_path / "nox-st_a5.log").read_text()
    verdicts = [line for line in log.splitlines() if line.startswith("simpler: ")]
    assert verdicts, log[-3000:]
    assert verdicts[-1].endswith("-> exit 130 (interrupted by SIGINT)"), verdicts[-1]
    assert " not run " in verdicts[-1]  # the Resource tests, at least, never ran
    assert shell.returncode == 130, log[-2000:]
