"""How a run's children start (Resource children, retry processes, isolated units): forked
from a warm process that has imported pytest, the plugin and the runner's library and
touched no device, or, where forking is unsafe, as fresh interpreters as before.

When forking is unsafe, when the warm process starts, and what the summary says of it:
docs/isolation.md, "How children start".
"""

from __future__ import annotations

import os
import sys

from simpler.contract import SIM_PLATFORMS
from simpler.contract.child import ChildContract, run_wide_env
from simpler.contract.settings import FORK_CHILDREN_ENV
from simpler.processes.process import Launcher, PopenLike, fresh_interpreter
from simpler.processes.warm_client import WarmProcess, WarmProcessGone

__all__ = ["ChildStarts"]

FORKED = "forked from a warm process"
# What the warm process imports before it forks: what every child would import first.
# Not pytest-xdist, nor any other plugin: pytest warns that an imported plugin cannot have its
# asserts rewritten (simpler's packages say they need none).
PRELOAD = ("pytest", "numpy", "simpler.plugin.hooks")
SIM_LIBRARY = "simpler.runner.library:preload"  # builds or loads the simulator, no device
AFTER_FORK = ("simpler.plugin.hooks:after_fork",)
WARM_PYTEST = "simpler.processes.warm_process:warm_pytest"  # last: the plugins as pytest loads them


class ChildStarts:
    def __init__(self, platform: str, *, project_allows: bool = True) -> None:
        self.platform = platform
        self._mode = FORKED
        self.notes: list[str] = []  # what else the summary says of them (a fresh re-run)
        unsafe = _why_fresh(platform, project_allows)
        if unsafe is not None:
            self._mode = f"fresh interpreters ({unsafe})"
        self._warm: WarmProcess | None = None
        self._ending: WarmProcess | None = None  # told to end, not yet waited for
        self.preload_more: list[str] = []  # what this run's children need too (coverage.py)
        self.started_any = False  # the run started children (the summary says how, once)

    @property
    def how(self) -> str:
        """How the run's children started, for the summary's one line."""
        return "; ".join([self._mode, *self.notes])

    @property
    def forking(self) -> bool:
        return self._mode == FORKED

    @property
    def launcher(self) -> Launcher | None:
        return self._launch if self.forking else None

    def start(self, env: dict[str, str]) -> None:
        """Start the warm process now, so that its preloads run while the run does other
        work (the L2 phase); the first child then forks at once."""
        if self.forking and self._warm is None:
            self._warm = WarmProcess(self._preload(), list(AFTER_FORK), self._warm_env(env))

    def refuse(self, why: str) -> None:
        """Children start as fresh interpreters after all (``why``, learnt after the warm
        process may have started): it is closed."""
        self.close()
        self._mode = f"fresh interpreters ({why})"

    def close(self, *, wait: bool = True) -> None:
        """End the warm process. ``wait=False``: a run that turns out to fork no child does
        not wait for the preloads of a process it no longer needs; a later close waits."""
        if self._warm is not None:
            self._warm.close(wait=wait)
            self._ending = None if wait else self._warm
            self._warm = None
        elif wait and self._ending is not None:
            self._ending.close()
            self._ending = None

    def _launch(self, argv: list[str], env: dict[str, str], cwd: str | None) -> PopenLike:
        if not _is_pytest(argv) or not self.forking:
            return fresh_interpreter(argv, env, cwd)
        try:
            self.start(env)
            assert self._warm is not None
            return self._warm.launch(argv, env, cwd)
        except WarmProcessGone as gone:
            self._mode = f"fresh interpreters ({gone})"
            print(f"simpler: {gone}; children start as fresh interpreters", flush=True)
            return fresh_interpreter(argv, env, cwd)

    def _preload(self) -> list[str]:
        library = [SIM_LIBRARY] if self.platform in SIM_PLATFORMS else []
        return [*PRELOAD, *self.preload_more, *library, WARM_PYTEST]

    def _warm_env(self, child_env: dict[str, str]) -> dict[str, str]:
        """The warm process's own environment: the run's, less what names one process (its
        phase, devices, coverage: a warm process that runs no test measures nothing), told
        the platform whose library it preloads."""
        env = run_wide_env(child_env)
        env.pop("COVERAGE_PROCESS_START", None)  # coverage.py's other way to start measuring
        return {**env, **ChildContract(platform=self.platform).to_env()}


def _why_fresh(platform: str, project_allows: bool) -> str | None:
    if os.environ.get(FORK_CHILDREN_ENV, "1") in ("0", "false", "no"):
        return f"{FORK_CHILDREN_ENV}=0"
    if not project_allows:
        return "the project's simpler_fork_children = false"
    if platform == "cuda":
        return "platform cuda: a CUDA context does not survive a fork"
    if sys.platform != "linux":
        return "forking children is done on Linux only"
    return None


def _is_pytest(argv: list[str]) -> bool:
    return argv[:3] == [sys.executable, "-m", "pytest"]
