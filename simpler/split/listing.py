"""What the up-front collection found in a suite: the L2 tests and the Resource tests.

Apart from the collection that makes it (simpler/orchestrator/collection.py), so that the
shards and a plan's jobs, which split it, need nothing of the orchestrator.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from simpler.base.nodeids import file_of

__all__ = ["ResourceTest", "SuiteListing"]


@dataclass(frozen=True)
class ResourceTest:
    nodeid: str
    devices: int
    est_s: float | None
    timeout_s: float | None


@dataclass
class SuiteListing:
    l2: list[str] = field(default_factory=list)  # node ids of the tests the L2 phase runs
    # The L2 tests that ask for no pooled device worker: they need neither a device nor xdist.
    plain: set[str] = field(default_factory=set)
    resource: list[ResourceTest] = field(default_factory=list)
    # Marked @pytest.mark.unskippable: --affected-since runs them whatever changed.
    unskippable: set[str] = field(default_factory=set)

    def nodeids(self) -> list[str]:
        """Every test of the suite: the L2 ones, then the Resource ones."""
        return [*self.l2, *(t.nodeid for t in self.resource)]

    def l2_files(self) -> dict[str, list[str]]:
        files: dict[str, list[str]] = {}
        for nodeid in self.l2:
            files.setdefault(file_of(nodeid), []).append(nodeid)
        return files
