"""How long jobs took in earlier runs: the file that feeds the scheduler's estimates.

``.simpler/durations.json`` is one JSON object, ``{"<node id or label>": seconds}``.
A missing or damaged file only costs estimates, never a run, so it reads as empty.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from simpler.scheduler.jobs import Job

__all__ = [
    "DEFAULT_DURATIONS_PATH",
    "DEFAULT_EST_S",
    "estimator",
    "load_durations",
    "record_durations",
]

DEFAULT_EST_S = 30.0
DEFAULT_DURATIONS_PATH = Path(".simpler/durations.json")


def load_durations(path: Path = DEFAULT_DURATIONS_PATH) -> dict[str, float]:
    """The recorded seconds per key; ``{}`` when the file is missing or not such an object.

    Entries that are not a finite, non-negative number are dropped one by one, so one bad
    value does not cost the others.
    """
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    if not isinstance(document, dict):
        return {}
    return {
        key: float(value)
        for key, value in document.items()
        if isinstance(key, str) and _is_duration(value)
    }


def record_durations(path: Path, results: Iterable[tuple[str, float]]) -> None:
    """Merge ``(key, seconds)`` into the file; a later value for a key replaces the earlier.

    The file is replaced atomically (a temporary file in the same folder, then
    ``os.replace``), so a reader never sees half of it.
    """
    path = Path(path)
    merged = load_durations(path)
    merged.update((key, float(seconds)) for key, seconds in results if _is_duration(seconds))
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(merged, stream, indent=1, sort_keys=True)
            stream.write("\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def estimator(
    durations: Mapping[str, float], default: float = DEFAULT_EST_S
) -> Callable[[Job], float]:
    """A job's estimate: its own ``est_s``, else its recorded duration, else ``default``.

    The recorded duration is looked up by node id when the job has one, else by label.
    """

    def estimate(job: Job) -> float:
        if job.est_s is not None:
            return job.est_s
        return durations.get(job.nodeid or job.label, default)

    return estimate


def _is_duration(value: object) -> bool:
    # bool is an int to Python, but `true` is no number of seconds.
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )
