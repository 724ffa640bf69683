"""coverage.py started in every process of a run, before anything else in it runs.

``COVERAGE_PROCESS_CONFIG`` in a process's environment makes coverage.py's ``.pth`` file
start it there and in every process it starts, each writing a data file of its own under the
run's folder; the config is the project's own, with what the run must decide on top
(docs/coverage.md, "What gets measured", "Where the data goes").
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from simpler.contract.child import ChildCoverage
from simpler.coverage.options import CovOptions

if TYPE_CHECKING:
    from coverage.config import CoverageConfig

__all__ = [
    "RunCoverage",
    "data_dir_of",
    "slug",
    "worker_label",
]

_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


def data_dir_of(report: Path, run_id: str) -> Path:
    """Where a run's data files lie: ``coverage/<run>/`` beside its report file."""
    return report.parent / "coverage" / slug(run_id, limit=120)


def worker_label(label: str, worker: str) -> str:
    """An xdist worker's name: the label of the pytest process that started it, and its id."""
    return f"{label}, xdist worker {worker}"


def slug(text: str, *, limit: int = 60) -> str:
    """``text`` as a file name: safe characters only, long ones cut and told apart by a hash."""
    safe = _SLUG.sub("_", text).strip("_.") or "process"
    if len(safe) <= limit:
        return safe
    digest = hashlib.sha1(text.encode()).hexdigest()[:8]
    return f"{safe[: limit - 9]}-{digest}"


@dataclass
class RunCoverage:
    """The coverage of one run: its settings, where its data goes, what each process is told."""

    options: CovOptions
    data_dir: Path

    def __post_init__(self) -> None:
        self._base: CoverageConfig | None = None

    def child(self, label: str, *, workers_only: bool = False) -> ChildCoverage:
        """What a process named ``label`` is told to measure itself (or, ``workers_only``, an
        xdist controller to have its workers measured and not itself)."""
        config = self._config()
        config.data_file = str((self.data_dir / slug(label)).resolve())
        context = self.options.context or ""
        return ChildCoverage(label, config.serialize(), workers_only=workers_only, context=context)

    def _config(self) -> CoverageConfig:
        import copy

        if self._base is None:
            self._base = _run_config(self.options)
        return copy.copy(self._base)


def _run_config(options: CovOptions) -> CoverageConfig:
    """The project's coverage config with the run's decisions on top."""
    import coverage

    config_file: str | bool = options.config or True
    cov = coverage.Coverage(config_file=config_file, source=list(options.sources) or None)
    config = cov.config
    config.parallel = True  # one data file per process, named after it
    config.branch = config.branch or options.branch
    # A process stopped with SIGTERM (a job timeout, a cancelled CI step) saves what it has;
    # a process that ends with os._exit does too.
    config.sigterm = True
    config.patch = sorted({*config.patch, "_exit", "fork"})
    if options.context:
        # Only the C tracer keeps every context that reaches a line; sys.monitoring keeps
        # the first (coveragepy #2150, #2200).
        config.core = "ctrace"
    return config
