"""The suite of the isolation cells (scripts/chaos_isolation.py), collected only when they run
it (CHAOS_ISOLATION=1): the chaos scenarios, which run all of scripts/chaos_suite, never see it.

CHAOS_ISO_SIGINT=<file>: the L2 pass's pytest process, once its session is over (every L2
verdict written, nothing of the Resource phase started), sends SIGINT to the orchestrator
whose pid the cell wrote to that file when it started it."""

import os
import signal
from pathlib import Path

import pytest

collect_ignore_glob = [] if os.environ.get("CHAOS_ISOLATION") == "1" else ["*"]


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    pid_file = os.environ.get("CHAOS_ISO_SIGINT")
    controller = not hasattr(session.config, "workerinput")  # not an xdist worker
    l2_pass = os.environ.get("SIMPLER_PHASE") == "l2" and not session.config.option.collectonly
    if pid_file and controller and l2_pass and session.testscollected:
        os.kill(int(Path(pid_file).read_text()), signal.SIGINT)
