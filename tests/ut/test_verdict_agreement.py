"""The report's verdicts and the history's agree test by test, however a run's files arrive.

One verdict rule (``simpler.reporting.verdicts.supersedes``) decides both: what ``simpler
report`` prints from report files and what ``simpler history import`` stores from the same
files. Runs with retries, poison skips (a registration and the plain skip pytest reports for
it, in either order) and shards (several files of one run, copies and shorter copies among
them) are read both ways, the files in every order.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from postgres_server import PostgresServer
from test_history_attribution import GAVE_UP, Run, worker_key

from simpler.history.importer import import_reports
from simpler.history.store import open_store
from simpler.reporting.report_file import read_records
from simpler.reporting.verdicts import analyze, select_latest_runs

RUN_ID = "20261203T232528-26e1dd"
WORKER = worker_key()
Step = tuple[str, str, dict[str, Any]]  # phase, record type, fields


def result(phase: str, nodeid: str, outcome: str, attempt: int = 1) -> Step:
    """A test record as the plugin writes it."""
    return phase, "test", {
        "nodeid": nodeid, "outcome": outcome, "attempt": attempt, "runtime": "host_build_graph",
        "device": 0, "worker": WORKER, "poisoned": False, "message": "", "tail": "", "rc": None,
        "where": None, "duration_s": 0.25,
    }  # fmt: skip


def registration(phase: str, nodeid: str) -> Step:
    """A poison-skip registration: the worker could not be healed, the test is skipped."""
    return phase, "poison_skip", {
        "selector": nodeid, "nodeid": nodeid, "runtime": "host_build_graph", "worker": WORKER,
        "reason": GAVE_UP,
    }  # fmt: skip


# How a poison-skipped attempt reaches the report: the plugin's own record follows its
# registration; pytest's plain skip may come with it, before or after; a process that died
# leaves the registration alone.
POISON_SKIPS = {
    "registered": lambda p, n, a: [registration(p, n), result(p, n, "poison_skipped", a)],
    "registration, then a plain skip": lambda p, n, a: [
        registration(p, n),
        result(p, n, "skipped", a),
    ],
    "a plain skip, then the registration": lambda p, n, a: [
        result(p, n, "skipped", a),
        registration(p, n),
    ],
    "the registration alone": lambda p, n, a: [registration(p, n)],
}


class Scenario:
    """One run's steps per phase, each with the shard file its process wrote it to."""

    def __init__(self) -> None:
        self.steps: dict[str, list[tuple[str, Step]]] = {"l2": [], "resource": [], "retry": []}
        self.shards = 1

    def add(self, shard: int, steps: Sequence[Step]) -> None:
        for step in steps:
            self.steps[step[0]].append((f"shard{shard}", step))
        self.shards = max(self.shards, shard + 1)

    def __repr__(self) -> str:  # what hypothesis prints of a falsifying run
        return (
            "Scenario("
            + ", ".join(
                f"{shard}:{phase}:{kind}:{fields['nodeid']}:{fields.get('outcome', '')}"
                f"@{fields.get('attempt', '')}"
                for steps in self.steps.values()
                for shard, (phase, kind, fields) in steps
            )
            + ")"
        )

    def steps_of(self, shard: int) -> int:
        return sum(
            1 for steps in self.steps.values() for name, _ in steps if name == f"shard{shard}"
        )

    def files(
        self, folder: Path, copies: Sequence[tuple[int, int]] = (), start: float = 1_000.0
    ) -> list[Path]:
        """Each shard's file, its records in time order from ``start``; then ``copies``,
        (shard, steps kept): a shard's file copied while it was written, cut after a step."""
        folder.mkdir(parents=True, exist_ok=True)
        run = Run(RUN_ID, start)
        lines: dict[str, list[dict[str, Any]]] = {f"shard{i}": [] for i in range(self.shards)}
        cuts: dict[str, list[int]] = {shard: [] for shard in lines}  # the line after each step
        for phase, steps in self.steps.items():
            for shard, records in lines.items():
                records.append(run.add(phase, "phase", event="start", shard=shard))
            for shard, (_, kind, fields) in steps:
                lines[shard].append(run.add(phase, kind, **fields))
                cuts[shard].append(len(lines[shard]))
            for records in lines.values():
                records.append(run.add(phase, "phase", event="end", counts={}, returncode=0,
                                       duration_s=1.0, interrupted=None, error=None))  # fmt: skip
        written = []
        for shard, records in lines.items():
            run.records = records
            written.append(run.write(folder / f"{shard}.jsonl"))
        for index, (shard_index, kept) in enumerate(copies):
            shard = f"shard{shard_index}"
            run.records = lines[shard][: ([1] + cuts[shard])[kept]]
            written.append(run.write(folder / f"copy{index}.jsonl"))
        return written


def report_verdicts(files: Sequence[Path]) -> dict[str, str]:
    """What ``simpler report FILE...`` decides, the files in the order given."""
    records = select_latest_runs([read_records(path).records for path in files])
    return {nodeid: verdict.outcome for nodeid, verdict in analyze(records).verdicts.items()}


def history_verdicts(
    store: Path | str, files: Sequence[Path], *, together: bool = False
) -> dict[str, str]:
    """What the history (a file, or a server's URL) stores for the run, the files imported in
    the order given: each by an import of its own (as each CI job's), or ``together`` by one
    (read side by side)."""
    with closing(open_store(str(store))) as conn:
        for batch in [list(files)] if together else [[path] for path in files]:
            import_reports(conn, batch)
        rows = conn.execute("SELECT nodeid, outcome FROM verdicts WHERE run_id = ?", (RUN_ID,))
        return dict(rows.fetchall())


def assert_agreement(files: Sequence[Path], folder: Path, *, together: bool = False) -> None:
    db = folder / f"history-{len(list(folder.glob('history-*.db')))}.db"
    assert report_verdicts(files) == history_verdicts(db, files, together=together), [
        path.name for path in files
    ]


VICTIM, QUIET_VICTIM, TRIGGER = "t.py::test_victim", "t.py::test_quiet_victim", "t.py::test_hang"
SKIP_AFTER, SKIP_BEFORE, RESOURCE = "t.py::test_skip_after", "t.py::test_skip_before", "t.py::two"


def handcrafted() -> Scenario:
    """Every kind of record the rule weighs, over two shards."""
    scenario = Scenario()
    scenario.add(0, [result("l2", TRIGGER, "failed")])
    scenario.add(0, POISON_SKIPS["registered"]("l2", VICTIM, 1))
    scenario.add(1, POISON_SKIPS["registration, then a plain skip"]("l2", SKIP_AFTER, 1))
    scenario.add(1, POISON_SKIPS["a plain skip, then the registration"]("l2", SKIP_BEFORE, 1))
    scenario.add(1, POISON_SKIPS["the registration alone"]("l2", QUIET_VICTIM, 1))
    scenario.add(1, [result("resource", RESOURCE, "failed")])
    scenario.add(0, [result("retry", TRIGGER, "failed", 2), result("retry", TRIGGER, "flaky", 3)])
    # The victim is registered again behind a second fault, then recovers in the next round.
    scenario.add(0, POISON_SKIPS["a plain skip, then the registration"]("retry", VICTIM, 2))
    scenario.add(0, [result("retry", VICTIM, "recovered", 2)])
    return scenario


def test_the_handcrafted_run_agrees_in_every_order_of_its_files() -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        # Both shards, a copy of the first taken amid its retry, and a whole copy of the second.
        scenario = handcrafted()
        files = scenario.files(folder, copies=[(0, 4), (1, scenario.steps_of(1))])
        for order in itertools.permutations(files):
            assert_agreement(order, folder)
        assert_agreement(files[::-1], folder, together=True)
        assert report_verdicts(files) == {
            TRIGGER: "flaky", VICTIM: "recovered", SKIP_AFTER: "poison_skipped",
            SKIP_BEFORE: "poison_skipped", QUIET_VICTIM: "poison_skipped", RESOURCE: "failed",
        }  # fmt: skip


def test_a_server_agrees_too(postgres_server: PostgresServer) -> None:
    """The same run into PostgreSQL, whose imports weigh the rule under the run's lock."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        scenario = handcrafted()
        files = scenario.files(folder, copies=[(0, 4), (1, scenario.steps_of(1))])
        for index, order in enumerate([files, files[::-1]]):
            url = postgres_server.create_database(f"agreement_{os.getpid()}_{index}")
            assert history_verdicts(url, order) == report_verdicts(order)


def test_the_later_record_of_one_attempt_decides_whichever_file_comes_first() -> None:
    """Two files that each hold an attempt of the test: its later record decides, both ways."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        early, late = Scenario(), Scenario()
        early.add(0, [result("retry", TRIGGER, "failed", 2)])
        late.add(0, [result("retry", TRIGGER, "flaky", 2)])
        files = [*early.files(folder / "early"), *late.files(folder / "late", start=2_000.0)]
        for order in itertools.permutations(files):
            assert report_verdicts(order) == {TRIGGER: "flaky"}
            assert_agreement(order, folder)


@st.composite
def one_test(draw: st.DrawFn, nodeid: str) -> list[list[Step]]:
    """One test's records through the run's phases, as simpler writes them: a list per
    process that wrote them, which stay together in one file."""
    kind = draw(st.sampled_from(["trigger", "victim", "plain", "resource"]))
    if kind == "plain":
        return [[result("l2", nodeid, draw(st.sampled_from(["passed", "failed", "skipped"])))]]
    if kind == "resource":
        return [[result("resource", nodeid, draw(st.sampled_from(["passed", "failed"])))]]
    if kind == "trigger":  # it poisoned its worker: a fresh process each extra attempt
        processes = [[result("l2", nodeid, "failed")]]
        for attempt in (2, 3):
            outcome = draw(st.sampled_from(["flaky", "failed"]))
            processes.append([result("retry", nodeid, outcome, attempt)])
            if outcome == "flaky":
                break
        return processes
    poison_skip = st.sampled_from(sorted(POISON_SKIPS))
    processes = [POISON_SKIPS[draw(poison_skip)]("l2", nodeid, 1)]
    # Its retry: never re-run, or run, or registered again behind another test's fault and
    # then run, or registered again and never run after; each round a fresh process.
    retry = draw(st.sampled_from(["none", "run", "registered, then run", "registered twice"]))
    for round_ in retry.split(", then "):
        if round_.startswith("registered"):
            for _ in range(2 if round_.endswith("twice") else 1):
                processes.append(POISON_SKIPS[draw(poison_skip)]("retry", nodeid, 2))
        elif round_ == "run":
            outcome = draw(st.sampled_from(["recovered", "failed", "skipped"]))
            processes.append([result("retry", nodeid, outcome, 2)])
    return processes


@st.composite
def runs(draw: st.DrawFn) -> tuple[Scenario, list[tuple[int, int]]]:
    """A run of a few tests over one to three shards, and copies of its shards' files cut
    anywhere. A test is in one shard: a job runs its share of the suite through every phase,
    so all of a test's records, its retries' included, are in that job's report."""
    scenario = Scenario()
    shards = draw(st.integers(1, 3))
    for index in range(draw(st.integers(1, 4))):
        shard = draw(st.integers(0, shards - 1))
        for process in draw(one_test(f"t.py::test_{index}")):
            scenario.add(shard, process)
    copies = []
    for _ in range(draw(st.integers(0, 2))):
        shard = draw(st.integers(0, scenario.shards - 1))
        copies.append((shard, draw(st.integers(0, scenario.steps_of(shard)))))
    return scenario, copies


@settings(
    max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(runs(), st.data())
def test_any_run_agrees_in_any_order_of_its_files(
    run: tuple[Scenario, list[tuple[int, int]]], data: st.DataObject
) -> None:
    """The report in every order of the files (cheap), the history in one of them."""
    scenario, copies = run
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        files = scenario.files(folder, copies)
        decided = report_verdicts(files)
        for order in itertools.permutations(files):
            assert report_verdicts(order) == decided, [path.name for path in order]
        order = data.draw(st.permutations(files), label="import order")
        assert history_verdicts(folder / "history.db", order) == decided
