"""What ``simpler run`` was asked, typed: simpler/commands/run.py reads its command line into
one ``RunOptions``, and the run is prepared from it (prepare.py), never from argparse's
Namespace, so that what a run takes is written down in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from simpler.coverage.options import CovRequest

__all__ = ["RunOptions"]


@dataclass(frozen=True)
class RunOptions:
    platform: str
    device: str  # the spec as typed (0-7): prepare.py parses it, so its error names it
    phases: str  # comma-separated, as typed: prepare.py checks each
    report: str | None = None
    fail_on_flaky: bool = False
    fail_if_nothing_ran: bool = False
    jobs: int | None = None  # -j: the run's slots; None: $SIMPLER_JOBS, else the CPU count
    no_recovery: bool = False
    tail_lines: int = 80
    policy: str = "backfill"
    job_timeout: float | None = None
    session_timeout: float | None = None
    exitfirst: bool = False
    junit: Path | None = None
    quarantine: Path | None = None
    shard: str | None = None  # I/N as typed: the share's reader parses it
    shard_durations: Path | None = None
    plan: Path | None = None  # --plan, else $SIMPLER_PLAN
    job: str | None = None  # --job, else $SIMPLER_JOB
    run_id: str | None = None
    new_run: bool = False
    history: str | None = None  # a SQLite path or a postgresql:// URL
    coverage: CovRequest = field(default_factory=CovRequest)
    isolate: str | None = None
    deadline: str | None = None  # --deadline as typed ($SIMPLER_DEADLINE: prepare.py)
    impact_map: bool = False  # --impact-map: the run's per-test coverage kept in the history
    affected_since: str | None = None  # --affected-since REV: only what a change can break
    affected_shadow: bool = False  # --affected-shadow: decide, run everything, count the misses
