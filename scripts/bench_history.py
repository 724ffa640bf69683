"""A run's cost must not grow with the report file's history (issue 12).

The same ``simpler run`` of one-device no-op Resource children, on the simulated card,
against a report file that already holds 200k records of earlier runs and against an
empty one; the runs alternate, each file restored before every run, and the ratio of the
medians is the figure.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import Figure, _command_seconds, noop_children_run

__all__ = ["history_figures", "write_history"]

HISTORY_RECORDS = 200_000
HISTORY_GOAL = 1.1  # issue 12: a run with 200k old records within 1.1x of one on an empty file
RECORDS_PER_RUN = 1_000  # an earlier run: its phases, tests, children and lifecycle records


def write_history(path: Path, records: int = HISTORY_RECORDS) -> int:
    """Earlier runs as ``simpler run`` writes them, ``records`` lines in all; returns the runs."""
    rng = random.Random(12)
    runs = 0
    written = 0
    with open(path, "w") as stream:
        while written < records:
            lines = list(_old_run(rng, runs, min(RECORDS_PER_RUN, records - written)))
            stream.write("".join(lines))
            written += len(lines)
            runs += 1
    return runs


def _old_run(rng: random.Random, index: int, budget: int) -> Iterator[str]:
    run = f"20250101T{index // 3600 % 24:02d}{index // 60 % 60:02d}{index % 60:02d}-old{index:03d}"
    clock = 1_735_689_600.0 + index * 3600.0

    def line(phase: str, record_type: str, **fields: object) -> str:
        nonlocal clock
        clock += rng.uniform(0.01, 2.0)
        base = {"schema": 1, "run": run, "ts": round(clock, 3), "phase": phase}
        return json.dumps({**base, "type": record_type, **fields}, separators=(",", ":")) + "\n"

    # Four phase brackets, a few children, a lifecycle record or two; the rest are L2 tests.
    children = 20
    tests = max(0, budget - 8 - 2 * children - 2)
    yield line("l2", "phase", event="start", shard=None)
    for test in range(tests):
        nodeid = f"tests/st/ops/test_op_{test // 20:03d}.py::test_case[{test % 20}]"
        outcome = "failed" if rng.random() < 0.01 else "passed"
        yield line(
            "l2",
            "test",
            nodeid=nodeid,
            outcome=outcome,
            attempt=1,
            runtime="tensormap_and_ringbuffer",
            device=test % 8,
            message="" if outcome == "passed" else "AssertionError: mismatch at index 3",
            tail="" if outcome == "passed" else f"{nodeid}\nE   AssertionError\n" * 5,
            worker=f"gw{test % 8}",
            poisoned=False,
            rc=None,
            where=None,
            duration_s=round(rng.uniform(0.05, 2.0), 3),
        )
    yield line("l2", "lifecycle", worker="gw3", source="healthy", dest="poisoned", rc=507015)
    yield line("l2", "lifecycle", worker="gw3", source="poisoned", dest="healthy", rc=0)
    yield line("l2", "phase", event="end", counts={"passed": tests}, returncode=0, duration_s=900)
    yield line("resource", "phase", event="start", shard=None)
    for child in range(children):
        nodeid = f"tests/st/multi/test_collective_{child:02d}.py::test_allreduce"
        yield line(
            "resource",
            "test",
            nodeid=nodeid,
            outcome="passed",
            attempt=1,
            runtime="tensormap_and_ringbuffer",
            device=child % 8,
            message="",
            tail="",
            duration_s=3.0,
        )
        yield line(
            "resource",
            "child",
            label=nodeid,
            nodeid=nodeid,
            returncode=0,
            signal=None,
            devices=[child % 8],
            duration_s=3.4,
            timed_out=False,
            reached_summary=True,
            tail=f"{nodeid} PASSED\n1 passed in 3.0s\n",
            log=f".simpler/logs/child-{child:02d}.log",
        )
    yield line("resource", "phase", event="end", counts={"passed": children}, returncode=0)
    yield line("report", "phase", event="start", shard=None)
    yield line("report", "phase", event="end", counts={}, returncode=0, duration_s=0.5)


def _run_argv(report: Path) -> list[str]:
    # --new-run: without it the run would continue the newest run of the old history.
    return noop_children_run(report, "resource,report", "--new-run")


def history_figures(repeats: int) -> list[Figure]:
    with tempfile.TemporaryDirectory(prefix="simpler-bench-history-") as folder:
        work = Path(folder)
        pristine = work / "history.pristine.jsonl"
        runs = write_history(pristine)
        full, empty = work / "full.jsonl", work / "empty.jsonl"

        def fresh() -> None:
            # Outside the timing: each run meets the same file, not one grown by the run before.
            shutil.copyfile(pristine, full)
            empty.write_bytes(b"")

        saved = os.environ.get("SIMPLER_LOCK_DIR")
        os.environ["SIMPLER_LOCK_DIR"] = str(work / "locks")  # no other run holds these cards
        try:
            fresh()
            _command_seconds(_run_argv(full))  # page cache, .pyc files, the compiled runner
            _command_seconds(_run_argv(empty))
            full_times, empty_times = [], []
            for _ in range(repeats):  # interleaved, so a busy neighbour favours neither side
                fresh()
                full_times.append(_command_seconds(_run_argv(full)))
                empty_times.append(_command_seconds(_run_argv(empty)))
        finally:
            if saved is None:
                os.environ.pop("SIMPLER_LOCK_DIR", None)
            else:
                os.environ["SIMPLER_LOCK_DIR"] = saved
        size_mb = pristine.stat().st_size / 1e6
    full_s, empty_s = statistics.median(full_times), statistics.median(empty_times)
    return [
        Figure(
            f"report history: 16 one-device children after {HISTORY_RECORDS // 1000}k old records",
            full_s / empty_s,
            "the same run on an empty report file",
            f"{full_s:.2f}s vs {empty_s:.2f}s (medians of {repeats}; {runs} earlier runs, "
            f"{size_mb:.0f} MB)",
            HISTORY_GOAL,
        )
    ]


if __name__ == "__main__":
    for figure in history_figures(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        print(figure)
