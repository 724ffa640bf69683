"""``simpler history durations --out F``: the learned-durations file, from every run the
history holds instead of from one machine's runs alone.

The scheduler's own format (``simpler.scheduler.durations``), keyed by node id, Resource
label, ``file:PATH`` and ``startup:l2`` (what each key counts: docs/history.md, "Reading
it"). A run gives a key at most one sample; the file is replaced atomically.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from simpler.base.nodeids import file_of
from simpler.contract import PASSING_OUTCOMES, phase_rank
from simpler.history.store.connection import Connection
from simpler.history.window import EVERY_RUN, Window, WindowRun, window_runs
from simpler.scheduler.durations import KEPT_SAMPLES, Measured, is_duration, write_document

__all__ = ["L2_STARTUP_KEY", "export_durations", "run_durations"]

_RUN_ATTEMPTS_SQL = (
    "SELECT nodeid, label, phase, attempt, outcome, duration_s, device FROM attempts "
    "WHERE run_id = ?"
)
_L2_PHASE_SQL = "SELECT sum(duration_s) FROM run_phases WHERE run_id = ? AND phase = 'l2'"
L2_STARTUP_KEY = "startup:l2"


def export_durations(
    conn: Connection,
    out: Path,
    *,
    window: Window = EVERY_RUN,
) -> int:
    """Write the durations of the window's runs to ``out``; return the entries written."""
    samples: dict[str, list[float]] = defaultdict(list)
    # Oldest run first, so each key's samples end with its newest, as the format wants.
    for run in window_runs(conn, window):
        for key, seconds in run_durations(conn, run).items():
            samples[key].append(seconds)
    document = {
        key: Measured(tuple(values[-KEPT_SAMPLES:]), len(values)).to_json()
        for key, values in samples.items()
    }
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_document(out, document)
    return len(document)


def run_durations(conn: Connection, run: WindowRun) -> dict[str, float]:
    """One run's sample per key (the module's docstring)."""
    passing: dict[str, tuple[tuple[int, int], float, str | None]] = {}
    files: dict[str, float] = defaultdict(float)
    l2_devices: set[int] = set()
    for nodeid, label, phase, attempt, outcome, seconds, device in conn.execute(
        _RUN_ATTEMPTS_SQL, (run.run_id,)
    ):
        if not is_duration(seconds):
            continue
        if phase == "l2":
            files[f"file:{file_of(nodeid)}"] += seconds
            if device is not None:
                l2_devices.add(device)
        order = (phase_rank(phase), attempt)
        # The test's last passing attempt of the run: a retry's time, if it was retried.
        if outcome in PASSING_OUTCOMES and order > passing.get(nodeid, ((-1, -1), 0, None))[0]:
            passing[nodeid] = (order, float(seconds), label)
    # Sums in the store's row order: to the microsecond a report measures, the same on any
    # store (a float sum's last bits follow its order).
    durations: dict[str, float] = {key: round(seconds, 6) for key, seconds in files.items()}
    l2_phase_s = conn.execute(_L2_PHASE_SQL, (run.run_id,)).fetchone()[0]
    if files and is_duration(l2_phase_s):
        startup = l2_phase_s - sum(files.values()) / max(1, len(l2_devices))
        durations[L2_STARTUP_KEY] = round(max(startup, 0.0), 6)
    labels: dict[str, float] = defaultdict(float)
    for nodeid, (_, seconds, label) in passing.items():
        durations[nodeid] = seconds
        if label:
            labels[label] += seconds
    for label, seconds in labels.items():
        # A node id keeps its own time: the scheduler looks a job up by node id first, and a
        # label that names a test (a child of one test) is that test.
        durations.setdefault(label, round(seconds, 6))
    return durations
