"""What the history stores about a run besides its tests: where it ran and how its phases went.

From the import's environment (the commit, branch and runner the caller names, else GitHub
Actions' variables, else git, else the host name) and the run's own records (its platform,
times, per phase the starts, ends and return codes that decide whether it is complete, a
shadow run's decision). Phases are kept per source report file (docs/history.md, "What is
in the file").
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import astuple, dataclass, field
from typing import Any

from simpler.contract.settings import RUNNER_NAME_ENV
from simpler.reporting.affected_block import AffectedDecision, decision_of
from simpler.reporting.phase_accounts import READER_PHASES
from simpler.reporting.records import ChildRecord, LifecycleRecord, PhaseRecord, Record, TestRecord

__all__ = [
    "MetaSource",
    "PhaseTally",
    "RunMeta",
    "RunPhases",
    "RunShape",
    "environment_meta",
    "record_key",
    "worst_returncode",
]

GIT_TIMEOUT_S = 2.0  # a hung git (a network file system) must not hang the import
# pytest's "no tests collected" is no failure: any other non-zero code is worse than it.
_BENIGN_CODES = (0, 5)


@dataclass(frozen=True)
class RunMeta:
    commit: str | None = None
    branch: str | None = None
    runner: str | None = None


@dataclass
class PhaseTally:
    """One phase of one source: how often it started and ended, and its worst return code."""

    starts: int = 0
    ends: int = 0
    returncode: int | None = None
    duration_s: float | None = None  # its end records' durations, summed


@dataclass
class RunShape:
    """What one source's records say about the run, apart from its tests."""

    started: float | None = None
    ended: float | None = None
    platforms: Counter[str] = field(default_factory=Counter)
    phases: dict[str, PhaseTally] = field(default_factory=dict)
    # A shadow run's selection (the L2 start record's ``affected``): the history keeps it to
    # count what the selection would have missed (shadow_rows.py). None in any other run.
    shadow: AffectedDecision | None = None

    @property
    def platform(self) -> str | None:
        return self.platforms.most_common(1)[0][0] if self.platforms else None

    def add(self, typed: Record) -> None:
        """Take one record of the run other than a test's (a test's time reaches the run
        through its attempt), in file order."""
        ts = typed.ts
        if ts is not None:
            if self.started is None or ts < self.started:
                self.started = ts
            if self.ended is None or ts > self.ended:
                self.ended = ts
        if isinstance(typed, PhaseRecord):
            self._phase(typed)
            if not typed.is_end and typed.affected:
                decided = decision_of([typed])  # read as the summary reads it
                if decided is not None and decided.shadow:
                    self.shadow = decided
        elif isinstance(typed, LifecycleRecord) and not self.platforms:
            self._platform_of_worker(typed.worker)  # one lifecycle record names it

    def _phase(self, record: PhaseRecord) -> None:
        if record.platform:  # the start records of simpler run name it, and they win
            self.platforms[record.platform] += 1_000_000
        tally = self.phases.setdefault(record.phase, PhaseTally())
        if record.is_start:
            tally.starts += 1
        elif record.is_end:
            tally.ends += 1
            code = record.returncode
            if code is not None:
                tally.returncode = worst_returncode([tally.returncode, code])
            took = record.duration_s
            if took is not None and took >= 0:
                tally.duration_s = (tally.duration_s or 0.0) + took

    def _platform_of_worker(self, worker: str) -> None:
        # A report of plain pytest (or of a simpler older than the phase records' platform)
        # names the platform nowhere else: a pooled worker's key begins with it
        # ("a5sim/host_build_graph/dev0/gw0"). Not a field of the lifecycle record.
        if worker.count("/") >= 3:
            self.platforms[worker.split("/", 1)[0]] += 1


class RunPhases:
    """Every phase of a run, per source, across every import of it so far."""

    def __init__(self, rows: Iterable[tuple[str, str, int, int, int | None, float | None]]) -> None:
        """``rows``: what the database holds: phase, source, starts, ends, returncode and
        duration."""
        self.tallies = {
            (phase, src): PhaseTally(s, e, code, took) for phase, src, s, e, code, took in rows
        }

    def merge(self, source: str, tallies: Mapping[str, PhaseTally]) -> None:
        """Raise ``source``'s tallies to what it holds now: a file read again has at least the
        records it had, and a shorter copy of it lowers nothing."""
        for phase, tally in tallies.items():
            old = self.tallies.get((phase, source))
            if old is not None:
                tally = PhaseTally(
                    max(old.starts, tally.starts),
                    max(old.ends, tally.ends),
                    worst_returncode([old.returncode, tally.returncode]),
                    max((d for d in (old.duration_s, tally.duration_s) if d is not None),
                        default=None),
                )  # fmt: skip
            self.tallies[(phase, source)] = tally

    @property
    def complete(self) -> bool:
        """Every phase that started in a source also ended there (the report phase apart)."""
        return all(
            t.ends >= t.starts
            for (name, _), t in self.tallies.items()
            if name not in READER_PHASES  # one left unfinished cannot hide a test
        )

    @property
    def exit_code(self) -> int | None:
        """The report phase's return code when it ended (the run's verdict), else the worst."""
        tallies = self.tallies.items()
        reported = [t.returncode for (name, _), t in tallies if name == "report" and t.ends]
        if any(code is not None for code in reported):
            return worst_returncode(reported)
        return worst_returncode(t.returncode for _, t in tallies)

    def rows(self, run_id: str) -> list[tuple[str, str, str, int, int, int | None, float | None]]:
        return [
            (run_id, phase, src, t.starts, t.ends, t.returncode, t.duration_s)
            for (phase, src), t in sorted(self.tallies.items())
        ]


class MetaSource:
    """The caller's commit, branch and runner first; the environment's, asked once and only
    when the caller left one out (git costs a process), fill what the database lacks."""

    def __init__(self, commit: str | None, branch: str | None, runner: str | None) -> None:
        self.given = RunMeta(commit, branch, runner)
        self._found: RunMeta | None = None

    def merged(self, stored: RunMeta) -> RunMeta:
        """What the caller names wins, what the database holds stays, the environment fills
        the rest."""
        values = [
            given or held for given, held in zip(astuple(self.given), astuple(stored), strict=True)
        ]
        if None in values:
            if self._found is None:
                self._found = environment_meta()
            values = [
                value or found for value, found in zip(values, astuple(self._found), strict=True)
            ]
        return RunMeta(*values)


def worst_returncode(codes: Iterable[int | None]) -> int | None:
    """The code that says most is wrong: any failure over "no tests" (5) over success (0)."""
    known = [code for code in codes if code is not None]
    if not known:
        return None
    return max(known, key=lambda code: (code not in _BENIGN_CODES, code != 0, abs(code)))


# What tells one record from another: the process that wrote it and when. Not the whole
# record: a phase's start lists every planned test, and naming it must stay cheap. (In this
# order: a stored run's source is named by it.)
_IDENTITY = tuple(
    field.key
    for field in (
        Record.run, Record.ts, Record.phase, Record.type, PhaseRecord.event, TestRecord.nodeid,
        TestRecord.worker, ChildRecord.label,
    )
)  # fmt: skip


def record_key(record: Mapping[str, Any]) -> str:
    """A short stable name for a record: the same record read from any copy of its file (or
    from memory, as ``simpler run --history`` hands it over) gets the same key."""
    identity = [record.get(name) for name in _IDENTITY]
    text = json.dumps(identity, separators=(",", ":"), default=str)
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def environment_meta(
    env: Mapping[str, str] | None = None, *, cwd: str | os.PathLike[str] | None = None
) -> RunMeta:
    """Commit, branch and runner as the import's environment tells them (each may be None).

    GitHub Actions first: its variables name the commit and branch the workflow ran for,
    where a checkout of a pull request sits on a merge commit git would name instead.
    """
    env = os.environ if env is None else env
    commit = _actions_commit(env) or _git(["rev-parse", "HEAD"], cwd)
    branch = env.get("GITHUB_HEAD_REF") or env.get("GITHUB_REF_NAME") or None
    if branch is None:
        named = _git(["rev-parse", "--abbrev-ref", "HEAD"], cwd)
        branch = named if named != "HEAD" else None  # "HEAD": a detached checkout
    runner = env.get(RUNNER_NAME_ENV) or env.get("RUNNER_NAME") or _hostname()
    return RunMeta(commit=commit, branch=branch, runner=runner)


def _actions_commit(env: Mapping[str, str]) -> str | None:
    """The commit a workflow ran for: a pull request's head, not the merge commit that
    ``GITHUB_SHA`` names for it; else ``GITHUB_SHA``."""
    if env.get("GITHUB_EVENT_NAME", "").startswith("pull_request") and env.get("GITHUB_EVENT_PATH"):
        try:
            with open(env["GITHUB_EVENT_PATH"], encoding="utf-8") as stream:
                head = json.load(stream)["pull_request"]["head"]["sha"]
            if isinstance(head, str) and head:
                return head
        except (OSError, ValueError, KeyError, TypeError):
            pass  # an unreadable event file: GITHUB_SHA still names a commit of the run
    return env.get("GITHUB_SHA") or None


def _git(args: list[str], cwd: str | os.PathLike[str] | None) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):  # no git, a hung one, a vanished cwd
        return None
    text = done.stdout.strip()
    return text if done.returncode == 0 and text else None


def _hostname() -> str | None:
    try:
        return socket.gethostname() or None
    except OSError:
        return None
