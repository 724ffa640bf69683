"""Which share of the suite a ``simpler run`` runs: all of it, the I-th of N balanced shards
(``--shard I/N``), or one job of a matrix plan (``--plan F --job ID``, or ``SIMPLER_PLAN``
and ``SIMPLER_JOB`` as a CI matrix sets them). One of the two ways, never both."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simpler.contract.settings import JOB_ENV, PLAN_ENV
from simpler.split.job_share import job_share
from simpler.split.listing import SuiteListing
from simpler.split.plan_file import load_suite_plan
from simpler.split.sharding import Shard, ShardSpec, parse_shard, split_suite
from simpler.usage import UsageError

__all__ = ["RunShare"]

PROG = "simpler run"


@dataclass(frozen=True)
class RunShare:
    shard: ShardSpec | None = None
    durations: dict[str, float] = field(default_factory=dict)  # what the shards balance on
    plan_path: Path | None = None
    plan: dict[str, Any] | None = None
    job: str | None = None

    @classmethod
    def read(
        cls, shard: str | None, durations: Path | None, plan: Path | None, job: str | None
    ) -> RunShare:
        """From ``--shard``/``--shard-durations`` or ``--plan``/``--job`` (or the env's)."""
        if shard is not None and (plan or job):
            raise UsageError(f"{PROG}: --shard and --plan/--job split the suite two ways: one")
        if shard is not None:
            try:
                spec = parse_shard(shard)
            except ValueError as error:
                raise UsageError(f"{PROG}: {error}") from None
            return cls(shard=spec, durations=_shard_durations(durations))
        if bool(plan) != bool(job):
            raise UsageError(f"{PROG}: --plan and --job go together ({PLAN_ENV}, {JOB_ENV})")
        if plan is None:
            return cls()
        return cls(plan_path=plan, plan=load_suite_plan(plan, PROG), job=job)

    @property
    def splits(self) -> bool:
        return self.shard is not None or self.plan is not None

    @property
    def label(self) -> str | None:
        """What the run's phase records say of its share."""
        if self.shard is not None:
            return str(self.shard)
        return f"job {self.job}" if self.job else None

    def __str__(self) -> str:
        return f"shard {self.shard}" if self.shard is not None else f"job {self.job}"

    def share(self, listing: SuiteListing, pool_size: int) -> Shard:
        if self.shard is not None:
            shards = split_suite(listing, self.shard.count, self.durations, pool_size)
            return shards[self.shard.index - 1]
        assert self.plan is not None and self.job is not None and self.plan_path is not None
        return job_share(listing, self.plan, self.job, self.plan_path)


def _shard_durations(path: Path | None) -> dict[str, float]:
    """Every matrix job must split alike: only a file they all share may weigh the split."""
    if path is None:
        return {}
    if not path.is_file():
        raise UsageError(f"{PROG}: --shard-durations {path} is not a readable file")
    from simpler.scheduler.durations import load_durations

    return load_durations(path)
