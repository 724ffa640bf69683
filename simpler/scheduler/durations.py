"""How long jobs took in earlier runs: the file that feeds the scheduler's estimates.

``.simpler/durations.json``: per node id or label ``{"seconds", "samples", "count"}`` and
maybe ``"at_least_s"`` (docs/design.md, "Learned durations"). The estimate is the median of
the last :data:`KEPT_SAMPLES` passing runs, never below ``at_least_s``. Writers ``flock``
``durations.json.lock``, merge and replace atomically; readers take no lock; a missing or
damaged file reads as empty.
"""

from __future__ import annotations

import fcntl
import json
import math
import statistics
from collections.abc import Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simpler.base.atomic_write import write_atomically

if TYPE_CHECKING:
    from collections.abc import Iterator

    from simpler.scheduler.jobs import Job, JobResult

__all__ = [
    "DEFAULT_DURATIONS_PATH",
    "DEFAULT_EST_S",
    "KEPT_SAMPLES",
    "Estimator",
    "Measured",
    "estimator",
    "is_duration",
    "load_durations",
    "load_measurements",
    "measurements_of",
    "record_durations",
    "record_results",
    "write_document",
]

DEFAULT_EST_S = 30.0
DEFAULT_DURATIONS_PATH = Path(".simpler/durations.json")
KEPT_SAMPLES = 5


@dataclass(frozen=True)
class Measured:
    """What earlier runs say about one key."""

    samples: tuple[float, ...]  # the last KEPT_SAMPLES, oldest first; may be empty
    count: int  # samples ever recorded
    at_least_s: float = 0.0  # a timed-out run got this far

    @property
    def seconds(self) -> float:
        typical = statistics.median(self.samples) if self.samples else 0.0
        return max(typical, self.at_least_s)

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "seconds": round(self.seconds, 3),
            "samples": list(self.samples),
            "count": self.count,
        }
        if self.at_least_s:
            entry["at_least_s"] = self.at_least_s
        return entry


def load_measurements(path: Path = DEFAULT_DURATIONS_PATH) -> dict[str, Measured]:
    """Every readable entry; ``{}`` when the file is missing or not a JSON object.

    Entries that are not a duration (old shape) or a well-formed entry (new shape) are
    dropped one by one, so one bad value does not cost the others.
    """
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    if not isinstance(document, dict):
        return {}
    return measurements_of(document)


def measurements_of(document: Mapping[str, object]) -> dict[str, Measured]:
    """The readable entries of a durations document already parsed (see load_measurements)."""
    entries = {key: _entry(value) for key, value in document.items() if isinstance(key, str)}
    return {key: entry for key, entry in entries.items() if entry is not None}


def load_durations(path: Path = DEFAULT_DURATIONS_PATH) -> dict[str, float]:
    """The smoothed seconds per key (what ``--shard-durations`` and the estimates use)."""
    return {key: entry.seconds for key, entry in load_measurements(path).items()}


def record_durations(
    path: Path,
    results: Iterable[tuple[str, float]],
    *,
    at_least: Iterable[tuple[str, float]] = (),
) -> None:
    """Add each ``(key, seconds)`` as a sample; ``at_least`` holds timed-out runs' seconds.

    Under the lock: read, merge, replace atomically (a temporary file in the same folder,
    then ``os.replace``), so a reader never sees half a file and no writer loses another's.
    """
    samples = [(key, float(seconds)) for key, seconds in results if is_duration(seconds)]
    bounds = [(key, float(seconds)) for key, seconds in at_least if is_duration(seconds)]
    if not samples and not bounds:
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        merged = load_measurements(path)
        for key, seconds in samples:
            merged[key] = _with_sample(merged.get(key), seconds)
        for key, seconds in bounds:
            merged[key] = _with_bound(merged.get(key), seconds)
        write_document(path, {key: entry.to_json() for key, entry in merged.items()})


def record_results(path: Path, results: Iterable[JobResult]) -> None:
    """Record what each finished job took, keyed by node id, else label.

    A passing job gives a sample. A timed-out job gives only a lower bound: it was stopped,
    so it would have taken longer. Any other failure gives nothing: a crash or an early
    assertion ends a job at an arbitrary point, which says nothing of a passing run.
    """
    finished = list(results)
    record_durations(
        path,
        [(r.nodeid or r.label, r.duration_s) for r in finished if r.ok],
        at_least=[(r.nodeid or r.label, r.duration_s) for r in finished if r.timed_out],
    )


class Estimator:
    """A job's estimate: its measured duration, else its own ``est_s``, else ``default``.

    Measurements are looked up by node id when the job has one, else by label. ``est_s``
    is a hand estimate that drifts; it only serves until the job has run once.
    """

    def __init__(self, durations: Mapping[str, float | Measured], default: float) -> None:
        self._durations = durations
        self._default = default

    def __call__(self, job: Job) -> float:
        measured = self._measured(job)
        if measured is not None and measured.samples:
            return measured.seconds
        unmeasured = job.est_s if job.est_s is not None else self._default
        if measured is None:
            return unmeasured
        # Only timeouts so far: the job takes at least that long, whatever est_s says.
        return max(unmeasured, measured.at_least_s)

    def source(self, job: Job) -> str:
        """Which estimate ``job`` gets: ``measured (N samples)``, ``est_s`` or ``default``
        (``timed out`` when only a timed-out run's duration, a lower bound, is known
        and it exceeds the others)."""
        measured = self._measured(job)
        if measured is not None and measured.samples:
            plural = "" if measured.count == 1 else "s"
            return f"measured ({measured.count} sample{plural})"
        unmeasured = job.est_s if job.est_s is not None else self._default
        if measured is not None and measured.at_least_s > unmeasured:
            return f"timed out (at least {measured.at_least_s:g}s)"
        return "est_s" if job.est_s is not None else "default"

    def _measured(self, job: Job) -> Measured | None:
        found = self._durations.get(job.nodeid or job.label)
        if found is None or isinstance(found, Measured):
            return found
        return Measured((float(found),), 1)


def estimator(
    durations: Mapping[str, float | Measured], default: float = DEFAULT_EST_S
) -> Estimator:
    """See :class:`Estimator`; plain numbers count as one sample each."""
    return Estimator(durations, default)


def _entry(value: object) -> Measured | None:
    if isinstance(value, int | float) and is_duration(value):
        return Measured((float(value),), 1)
    if not isinstance(value, dict):
        return None
    samples, count, floor = value.get("samples"), value.get("count"), value.get("at_least_s", 0)
    if not isinstance(samples, list) or not all(is_duration(s) for s in samples):
        return None
    if isinstance(count, bool) or not isinstance(count, int) or count < len(samples):
        return None
    if not is_duration(floor) or (not samples and not floor):
        return None
    return Measured(tuple(float(s) for s in samples[-KEPT_SAMPLES:]), count, float(floor))


def _with_sample(entry: Measured | None, seconds: float) -> Measured:
    if entry is None:
        return Measured((seconds,), 1)
    # A passing run supersedes the lower bound an earlier timeout left.
    return Measured((*entry.samples, seconds)[-KEPT_SAMPLES:], entry.count + 1)


def _with_bound(entry: Measured | None, seconds: float) -> Measured:
    if entry is None:
        return Measured((), 0, seconds)
    return Measured(entry.samples, entry.count, max(entry.at_least_s, seconds))


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    # A separate lock file: the data file itself is replaced, so a lock on it would be
    # held on an inode that the next writer no longer opens.
    lock_path = path.with_name(f"{path.name}.lock")
    with open(lock_path, "a", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def write_document(path: Path, document: dict[str, Any]) -> None:
    """Write a durations document beside ``path`` and rename it over ``path`` in one step."""
    text = json.dumps(document, indent=1, sort_keys=True) + "\n"
    write_atomically(path, lambda stream: stream.write(text.encode("utf-8")))


def is_duration(value: object) -> bool:
    # bool is an int to Python, but `true` is no number of seconds.
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )
