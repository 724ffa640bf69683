"""What every phase of one run shares: its settings, its id, and its view of the report file."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from simpler.coverage.process_env import RunCoverage
from simpler.orchestrator.children import ChildStarts
from simpler.orchestrator.deadline import Deadline
from simpler.orchestrator.options import RunOptions
from simpler.orchestrator.pytest_args import PytestArgs
from simpler.reporting import report_file
from simpler.reporting.follow import ReportFollower
from simpler.reporting.quarantine_file import QuarantineFile
from simpler.reporting.records import Record, RecordOrigin
from simpler.reporting.summary import Ruling

if TYPE_CHECKING:
    from simpler.impact.run_map import MapTarget
    from simpler.share.listing import ResourceTest

__all__ = ["RunContext"]

R = TypeVar("R", bound=Record)


@dataclass
class RunContext:
    platform: str
    devices: list[int]
    report: Path
    run_id: str
    # The processes the run keeps busy at once (-j), apart from the devices: a test that uses
    # no device takes any slot, one that uses a device a slot and its device.
    slots: int = 1
    pytest_args: PytestArgs = field(default_factory=PytestArgs)  # the user's, read by pytest
    # What the user asked (flags the phases read as typed: --policy, --job-timeout, ...);
    # a context a test builds has the defaults.
    options: RunOptions = field(default_factory=lambda: RunOptions("", "", ""))
    resource_tests: list[ResourceTest] | None = None  # collected up front by the CLI
    l2_files: list[str] | None = None  # this shard's L2 files; None: the user's selection
    # The L2 tests this run (this shard) is to run, and those of them that use no device;
    # None: not collected up front. Written into the L2 phase's start record as its plan.
    l2_tests: list[str] | None = None
    l2_plain: frozenset[str] = frozenset()
    ruling: Ruling | None = None  # what the phases before the report decided the exit code is
    shard: str | None = None
    history: str | None = None  # the history (a path or a server URL) this run goes into
    impact_map: MapTarget | None = None  # --impact-map: where the run's map is kept
    # --affected-since: the tests a change can break (a file of node ids every L2 process
    # keeps to), and the decision, each test's reasons, for the L2 phase's start record.
    only_tests: Path | None = None
    affected: dict[str, object] | None = None
    # The test quarantine (simpler-quarantine.toml) loaded before anything ran; None: none.
    test_quarantine: QuarantineFile | None = None
    current_phase: str = ""
    coverage: RunCoverage | None = None  # --cov: every process the run starts is measured
    deadline: Deadline | None = None  # --deadline: when the run must be over
    isolate: str | None = None  # --isolate file|test: each L2 file or test in a process of its own
    children: ChildStarts = field(default_factory=lambda: ChildStarts("", project_allows=False))
    cut_by_deadline: set[str] = field(default_factory=set)  # phases the deadline stopped
    # Per phase, the most processes it ran at once (its end record and summary line say it).
    phase_slots: dict[str, int] = field(default_factory=dict)
    # Follows the report file: each look reads only what was appended since the last one.
    _follower: ReportFollower | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def durations_file(self) -> Path:
        """Learned durations live beside the report file they were measured from."""
        return self.report.parent / "durations.json"

    def records(self) -> list[report_file.Record]:
        """This run's records so far, in file order (an unreadable file reads as none).

        The list only ever grows between calls (unless the file is replaced), so slicing
        a later list at an earlier one's length gives what was appended in between."""
        try:
            return self.followed().records()
        except report_file.ReportUnreadable:
            return []

    def followed(self) -> ReportFollower:
        """The follower of this run's records in the report file (ReportUnreadable as it reads)."""
        follower = self._follower
        if follower is None or (follower.path, follower.run_id) != (self.report, self.run_id):
            follower = self._follower = ReportFollower(self.report, self.run_id)
        return follower

    def record(self, kind: type[R], **fields: Any) -> R:
        """A new record of ``kind`` from the orchestrator: this run's, in its current phase."""
        return RecordOrigin(self.run_id, self.current_phase).build(kind, **fields)

    def write(self, record: Record) -> None:
        """Append ``record`` to this run's report file."""
        report_file.write_record(self.report, record)
