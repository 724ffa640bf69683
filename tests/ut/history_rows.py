"""Rows of the history database as the importer stores them, for the readers' unit tests.

A test describes each test's runs as a strip-like string, one character a run, and
:func:`seed` inserts runs, attempts and verdicts that agree with each other: a verdict per
(run, test) whose outcome is the last attempt's and whose ``attempts`` counts them, and a
cause on every failed attempt. The characters:

- ``.`` passed at the first attempt;
- ``F`` failed by its own fault, and again on retry (verdict failed);
- ``R`` failed by its own fault, passed on retry (verdict flaky);
- ``V`` failed on a poisoned device, passed on retry (verdict recovered);
- ``D`` failed on a poisoned device, and again on retry (verdict failed, cause device);
- ``P`` poison-skipped, never rerun (verdict poison_skipped, cause device);
- ``I`` failed in a run whose report is incomplete (verdict failed, cause infra);
- ``Q`` failed by its own fault while quarantined (verdict failed);
- ``B`` failed by its own fault, then on retry on a poisoned device (verdict failed, device);
- ``s`` skipped; ``x`` xfailed;
- ``-`` no verdict: the test was not in that run.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from simpler.history.schema import connect
from simpler.history.suites import record_suite, suite_of

T0 = 1_750_000_000.0  # the first run's start; run i starts i hours later
HOUR = 3600.0


@dataclass(frozen=True)
class Try:
    """One attempt of a test in a run."""

    outcome: str
    cause: str | None = None
    device: int | None = 0
    phase: str = "l2"
    duration_s: float | None = 1.0
    message: str = ""
    quarantined: bool = False
    label: str | None = None


def open_db(tmp_path: Path) -> sqlite3.Connection:
    return connect(tmp_path / "history.db")


def add_run(
    conn: sqlite3.Connection,
    run_id: str,
    *,
    started: float | None,
    commit: str | None = None,
    branch: str | None = "main",
    runner: str | None = "ci-1",
    complete: bool = True,
    imported: float | None = None,
) -> None:
    conn.execute(
        'INSERT INTO runs (run_id, "commit", branch, runner, platform, started, ended, '
        "complete, exit_code, imported) VALUES (?, ?, ?, ?, 'a2a3sim', ?, ?, ?, 0, ?)",
        (
            run_id,
            commit,
            branch,
            runner,
            started,
            None if started is None else started + 60,
            int(complete),
            imported,
        ),
    )


def add_test(
    conn: sqlite3.Connection, run_id: str, nodeid: str, *tries: Try, verdict: str | None = None
) -> None:
    """The test's attempts in the run, numbered from 1, and its verdict: the last attempt's
    outcome (``verdict`` overrides it, as a poison-skip registration's does)."""
    for number, attempt in enumerate(tries, start=1):
        conn.execute(
            "INSERT INTO attempts (run_id, nodeid, attempt, phase, outcome, duration_s, device, "
            "cause, quarantined, message, label, ts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                nodeid,
                number,
                attempt.phase,
                attempt.outcome,
                attempt.duration_s,
                attempt.device,
                attempt.cause,
                int(attempt.quarantined),
                attempt.message,
                attempt.label,
                float(number),
            ),
        )
    last = tries[-1]
    conn.execute(
        "INSERT INTO verdicts (run_id, nodeid, outcome, attempts, cause, quarantined) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (
            run_id,
            nodeid,
            verdict or last.outcome,
            len(tries),
            last.cause,
            int(any(t.quarantined for t in tries)),
        ),
    )
    # As the importer names the run's suite after its verdicts.
    held = conn.execute("SELECT nodeid FROM verdicts WHERE run_id = ?", (run_id,))
    record_suite(conn, run_id, suite_of(nodeid for (nodeid,) in held))


def tries_for(mark: str, *, device: int = 0, message: str = "AssertionError: boom") -> list[Try]:
    """The attempts a strip character stands for (the module's docstring)."""
    own = Try("failed", "test", device, message=message)
    sick = Try("failed", "device", device, message="device error 507015")
    return {
        ".": [Try("passed", device=device)],
        "F": [own, Try("failed", "test", device, phase="retry", message=message)],
        "R": [own, Try("flaky", device=device, phase="retry")],
        "V": [sick, Try("recovered", device=device, phase="retry")],
        "D": [sick, Try("failed", "device", device, phase="retry", message="device error")],
        "P": [Try("poison_skipped", "device", device, duration_s=None)],
        "I": [Try("failed", "infra", device, message="run incomplete")],
        "Q": [Try("failed", "test", device, message=message, quarantined=True)],
        "B": [own, Try("failed", "device", device, phase="retry", message="device error")],
        "s": [Try("skipped", device=device, duration_s=0.0)],
        "x": [Try("xfailed", device=device)],
    }[mark]


def seed(
    conn: sqlite3.Connection,
    strips: Mapping[str, str],
    *,
    commits: Sequence[str | None] | None = None,
    runners: Sequence[str | None] | None = None,
    branches: Sequence[str | None] | None = None,
    device: Callable[[int, str], int] = lambda run, nodeid: 0,
    message: Callable[[int, str], str] = lambda run, nodeid: f"AssertionError: run {run}",
) -> list[str]:
    """One run per character of the strips (all of one length), run i starting i hours after
    T0 on commit ``commits[i]`` (default ``c<i>``); returns the run ids, oldest first."""
    (length,) = {len(strip) for strip in strips.values()}
    run_ids = []
    conn.execute("BEGIN")
    for index in range(length):
        run_id = f"run{index:03d}"
        run_ids.append(run_id)
        add_run(
            conn,
            run_id,
            started=T0 + index * HOUR,
            commit=commits[index] if commits is not None else f"c{index}",
            runner=runners[index] if runners is not None else "ci-1",
            branch=branches[index] if branches is not None else "main",
            complete="I" not in {strip[index] for strip in strips.values()},
        )
        for nodeid, strip in strips.items():
            if strip[index] != "-":
                tries = tries_for(
                    strip[index], device=device(index, nodeid), message=message(index, nodeid)
                )
                add_test(conn, run_id, nodeid, *tries)
    conn.execute("COMMIT")
    return run_ids
