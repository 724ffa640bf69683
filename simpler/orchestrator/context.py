"""What every phase of one run shares: the run as decided before any phase runs
(``RunSetup``), the little the phases change as they go (``RunState``), and the run's view of
its report file (``RunContext``, which a phase is given)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from simpler.contract.child import ChildContract, ChildDeadline, devices_value
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
    from simpler.split.listing import ResourceTest

__all__ = ["RunContext", "RunSetup", "RunState"]

R = TypeVar("R", bound=Record)


@dataclass(frozen=True)
class RunSetup:
    """The run as prepare.py decided it from the options, before any phase ran."""

    # What the user asked (the platform, and flags the phases read as typed: --policy,
    # --job-timeout, ...); a setup a test builds has the defaults.
    options: RunOptions
    devices: list[int]  # --device, parsed
    report: Path  # the report file, resolved
    run_id: str
    # The processes the run keeps busy at once (-j), apart from the devices: a test that uses
    # no device takes any slot, one that uses a device a slot and its device.
    slots: int = 1
    pytest_args: PytestArgs = field(default_factory=PytestArgs)  # the user's, read by pytest
    resource_tests: list[ResourceTest] | None = None  # collected up front by the CLI
    l2_files: list[str] | None = None  # this shard's L2 files; None: the user's selection
    # The L2 tests this run (this shard) is to run, and those of them that use no device;
    # None: not collected up front. Written into the L2 phase's start record as planned.
    l2_tests: list[str] | None = None
    l2_plain: frozenset[str] = frozenset()
    shard: str | None = None
    history: str | None = None  # the history (a path or a server URL) this run goes into
    impact_map: MapTarget | None = None  # --impact-map: where the run's map is kept
    # --affected-since: the tests a change can break (a file of node ids every L2 process
    # keeps to), and the decision, each test's reasons, for the L2 phase's start record.
    only_tests: Path | None = None
    affected: dict[str, object] | None = None
    # The test quarantine (simpler-quarantine.toml) loaded before anything ran; None: none.
    test_quarantine: QuarantineFile | None = None
    coverage: RunCoverage | None = None  # --cov: every process the run starts is measured
    deadline: Deadline | None = None  # --deadline: when the run must be over

    @property
    def platform(self) -> str:
        return self.options.platform

    @property
    def isolate(self) -> str | None:
        """--isolate file|test: each L2 file or test in a process of its own."""
        return self.options.isolate

    @property
    def durations_file(self) -> Path:
        """Learned durations live beside the report file they were measured from."""
        return self.report.parent / "durations.json"

    def child(
        self,
        phase: str,
        *,
        label: str,
        attempt: int = 1,
        devices: list[int] | None = None,
        workers_only: bool = False,
        deadline: bool = False,
    ) -> ChildContract:
        """What the pytest process ``label`` of ``phase`` is told. ``devices`` None: the
        scheduler places it and tells it its devices. ``label`` names it in a measured run's
        coverage (``workers_only``: an xdist controller, whose workers are measured, not it);
        ``deadline``: it keeps to the run's deadline itself, starting no test that cannot
        end in time (a scheduled child is kept to it by the scheduler)."""
        quarantine = self.test_quarantine
        coverage = self.coverage
        return ChildContract(
            run_id=self.run_id,
            phase=phase,
            attempt=attempt,
            platform=self.platform,
            devices=devices_value(devices) if devices is not None else "",
            report=str(self.report),
            # Always told, empty for none: an inherited value is never the run's.
            quarantine=str(quarantine.path) if quarantine is not None else "",
            coverage=coverage.child(label, workers_only=workers_only) if coverage else None,
            deadline=(
                ChildDeadline(self.deadline.tests_end_at, str(self.durations_file))
                if deadline and self.deadline is not None
                else None
            ),
        )


@dataclass
class RunState:
    """What the phases change as they go."""

    current_phase: str = ""  # the phase running: what the orchestrator's records say
    ruling: Ruling | None = None  # what the phases before the report decided the exit code is
    cut_by_deadline: set[str] = field(default_factory=set)  # phases the deadline stopped
    # Per phase, the most processes it ran at once (its end record and summary line say it).
    phase_slots: dict[str, int] = field(default_factory=dict)
    # What starts once the L2 session frees its devices (the Resource phase), while it ends.
    when_devices_free: Callable[[], None] | None = None


@dataclass
class RunContext:
    """A run's setup and state, how its children start, and its records in the report file."""

    setup: RunSetup
    children: ChildStarts = field(default_factory=lambda: ChildStarts("", project_allows=False))
    state: RunState = field(default_factory=RunState)
    # Follows the report file: each look reads only what was appended since the last one.
    _follower: ReportFollower | None = field(default=None, init=False, repr=False, compare=False)

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
        setup = self.setup
        if follower is None or (follower.path, follower.run_id) != (setup.report, setup.run_id):
            follower = self._follower = ReportFollower(setup.report, setup.run_id)
        return follower

    def record(self, kind: type[R], **fields: Any) -> R:
        """A new record of ``kind`` from the orchestrator: this run's, in its current phase."""
        return RecordOrigin(self.setup.run_id, self.state.current_phase).build(kind, **fields)

    def write(self, record: Record) -> None:
        """Append ``record`` to this run's report file."""
        report_file.write_record(self.setup.report, record)
