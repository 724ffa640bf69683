"""Importing a long history must cost little more than reading it (issue 24).

200 runs x 5,000 tests (a million test records, 1% of them failures, retries included), one
report file per run as each CI job uploads it, imported into a fresh history database; the
baseline is a bare ``json.loads`` of every line of the same files. The imports alternate
with the baseline and the ratio of the medians is the figure. Beside it, the import as a CI
summary job pays for it (issue 34): the ``simpler history import`` process over 100 files
of 2,000 tests, start-up and per-file costs included, against the same baseline.

``write_bench_reports`` and ``build_bench_db`` are shared with the benchmark of the queries
that read such a database (``simpler history flaky``).
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import Figure, _command_seconds

__all__ = ["build_bench_db", "import_figures", "write_bench_reports"]

RUNS = 200
TESTS = 5_000
IMPORT_GOAL = 2.0  # issue 24: at most 2x a bare json.loads of the same lines
PROCESS_FILES = 100  # the process figure's report files, one run each (issue 34)
PROCESS_TESTS = 2_000
FAILURE_RATE = 0.01  # of the L2 tests: plain failures, device faults and their victims
RESOURCE_TESTS = 20  # of the tests, one child each
WORKERS = 8  # xdist workers, one device each
RUNTIME = "tensormap_and_ringbuffer"
START = 1_780_000_000.0  # the first run's clock; each run an hour after the one before
INCOMPLETE_EVERY = 10  # one run in ten was cancelled in its retry phase: it never ended
# A passing test's record, as the plugin writes it (test_records.build_test_record), with the
# keys in the writer's order: most of a report's lines, so written without json.dumps.
PASSED = (
    '{"schema":1,"run":"%s","ts":%r,"phase":"%s","type":"test","nodeid":%s,"outcome":"%s",'
    '"attempt":%d,"runtime":"%s","device":%d,"worker":"%s","poisoned":false,"message":"",'
    '"tail":"","rc":null,"where":null,"duration_s":%r}\n'
)
_ENCODED: dict[str, str] = {}  # node id -> its JSON string, encoded once for every run
SKIP_REASON = "worker a5sim/tensormap_and_ringbuffer/dev3/gw3 could not be recovered: rc 507046"


def write_bench_reports(folder: Path, runs: int = RUNS, tests: int = TESTS) -> list[Path]:
    """One report file per run, as ``simpler run`` writes them; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    suite = _suite(tests)
    paths = []
    for index in range(runs):
        path = folder / f"report-{index:03d}.jsonl"
        path.write_text("".join(_Run(index, suite).lines()))
        paths.append(path)
    return paths


def build_bench_db(path: Path, reports: list[Path] | None = None) -> Path:
    """A history database of the bench runs, each run with a commit of its own (the reports
    are written to a temporary folder when none are given): what the flaky query reads."""
    from simpler.history.schema import connect

    with tempfile.TemporaryDirectory(prefix="simpler-bench-import-") as folder:
        conn = connect(path)
        try:
            _import_all(conn, reports or write_bench_reports(Path(folder)))
        finally:
            conn.close()
    return path


def import_figures(repeats: int) -> list[Figure]:
    from simpler.history.importer import import_reports
    from simpler.history.schema import connect

    with tempfile.TemporaryDirectory(prefix="simpler-bench-import-") as folder:
        work = Path(folder)
        reports = write_bench_reports(work / "reports")
        lines = sum(1 for path in reports for _ in path.open("rb"))
        size_mb = sum(path.stat().st_size for path in reports) / 1e6

        def parse() -> float:
            return _parse_seconds(reports)

        def load(attempt: int) -> float:
            db = work / f"history-{attempt}.db"
            started = time.perf_counter()
            conn = connect(db)
            try:
                # One command for every file, as a backfill types it: `simpler history
                # import reports/*.jsonl` (the files are read on every core).
                import_reports(conn, reports, branch="main", runner="ci")
            finally:
                conn.close()
            seconds = time.perf_counter() - started
            for written in work.glob(f"history-{attempt}.db*"):
                written.unlink()  # the disk holds one database at a time
            return seconds

        parse()  # the page cache, as any second reader finds it
        import_times, parse_times = [], []
        for attempt in range(repeats):  # interleaved, so a busy neighbour favours neither side
            import_times.append(load(attempt))
            parse_times.append(parse())
    import_s, parse_s = statistics.median(import_times), statistics.median(parse_times)
    return [
        process_figure(repeats),
        Figure(
            f"history import: {RUNS} runs x {TESTS:,} tests",
            import_s / parse_s,
            "a bare json.loads of every line of the same files",
            f"{import_s:.2f}s vs {parse_s:.2f}s (medians of {repeats}; {lines:,} lines, "
            f"{size_mb:.0f} MB in {len(reports)} files)",
            IMPORT_GOAL,
        ),
    ]


def process_figure(repeats: int) -> Figure:
    """The import as a CI summary job runs it: one ``simpler history import`` process over
    100 report files of 2,000 tests, its start-up and its per-file costs included, against a
    bare ``json.loads`` of the same lines in one process."""
    with tempfile.TemporaryDirectory(prefix="simpler-bench-import-process-") as folder:
        work = Path(folder)
        reports = write_bench_reports(work / "reports", runs=PROCESS_FILES, tests=PROCESS_TESTS)
        command = [sys.executable, "-m", "simpler", "history", "import", *map(str, reports)]
        command += ["--branch", "main", "--runner", "ci", "--db"]

        def load(attempt: int) -> float:
            seconds = _command_seconds([*command, str(work / f"history-{attempt}.db")])
            for written in work.glob(f"history-{attempt}.db*"):
                written.unlink()
            return seconds

        _parse_seconds(reports)  # the page cache, as any second reader finds it
        load(-1)  # and the .pyc files
        import_times, parse_times = [], []
        for attempt in range(repeats):
            import_times.append(load(attempt))
            parse_times.append(_parse_seconds(reports))
    import_s, parse_s = statistics.median(import_times), statistics.median(parse_times)
    return Figure(
        f"`simpler history import` process: {PROCESS_FILES} files x {PROCESS_TESTS:,} tests",
        import_s / parse_s,
        "a bare json.loads of every line of the same files, in one process",
        f"{import_s:.2f}s vs {parse_s:.2f}s (medians of {repeats})",
        IMPORT_GOAL,
    )


def _parse_seconds(reports: list[Path]) -> float:
    started = time.perf_counter()
    for path in reports:
        with path.open("rb") as stream:
            for line in stream:
                json.loads(line)
    return time.perf_counter() - started


def _import_all(conn: Any, reports: list[Path]) -> None:
    from simpler.history.importer import import_reports

    for index, path in enumerate(reports):
        commit = f"{index // 3:040x}"  # three runs a commit: same-commit flips to count
        import_reports(conn, [path], commit=commit, branch="main", runner=f"ci-{index % 4}")


def _suite(tests: int) -> list[str]:
    """Node ids as a large device suite spells them."""
    ids = []
    for index in range(tests):
        module, case = divmod(index, 50)
        klass = f"TestOp{module % 7}On{'Ringbuffer' if module % 2 else 'HostGraph'}"
        ids.append(f"tests/st/ops/test_op_{module:03d}.py::{klass}::test_matches_golden[{case}]")
    return ids


class _Run:
    """One run's lines: L2 over every worker, Resource children, the retry, the report."""

    def __init__(self, index: int, suite: list[str]) -> None:
        self.rng = random.Random(index)
        self.run = f"202601{index // 24 % 28 + 1:02d}T{index % 24:02d}0000-{index:06x}"
        self.clock = START + index * 3600.0
        self.l2 = suite[: len(suite) - RESOURCE_TESTS]
        self.resource = suite[len(suite) - RESOURCE_TESTS :]
        self.incomplete = index % INCOMPLETE_EVERY == INCOMPLETE_EVERY - 1

    def tick(self) -> float:
        self.clock += self.rng.uniform(0.001, 0.02)
        return round(self.clock, 6)

    def line(self, phase: str, kind: str, **fields: object) -> str:
        base = {"schema": 1, "run": self.run, "ts": self.tick(), "phase": phase, "type": kind}
        return json.dumps({**base, **fields}, separators=(",", ":")) + "\n"

    def passed(
        self, phase: str, nodeid: str, device: int, outcome: str = "passed", attempt: int = 1
    ) -> str:
        duration = round(self.rng.uniform(0.01, 2.0), 6)
        encoded = _ENCODED.get(nodeid) or _ENCODED.setdefault(nodeid, json.dumps(nodeid))
        return PASSED % (self.run, self.tick(), phase, encoded, outcome, attempt, RUNTIME,
                         device, _worker(phase, device), duration)  # fmt: skip

    def failed(self, phase: str, nodeid: str, device: int, **fields: Any) -> str:
        return self.line(
            phase, "test", nodeid=nodeid, outcome=fields.pop("outcome", "failed"),
            attempt=fields.pop("attempt", 1), runtime=RUNTIME, device=device,
            worker=_worker(phase, device), poisoned=fields.pop("poisoned", False),
            message=fields.pop("message", ""), tail=fields.pop("tail", ""),
            rc=fields.pop("rc", None), where=fields.pop("where", None),
            duration_s=round(self.rng.uniform(0.01, 2.0), 6),
        )  # fmt: skip

    def lifecycle(self, phase: str, device: int, move: str, nodeid: str = "") -> str:
        source, dest, trigger = move.split()
        return self.line(
            phase, "lifecycle", worker=_worker(phase, device), runtime=RUNTIME, device=device,
            source=source, dest=dest, trigger=trigger, rc=507046 if dest == "poisoned" else None,
            where=None, nodeid=nodeid, attempt=None,
        )  # fmt: skip

    def end(self, phase: str, returncode: int, **fields: Any) -> str:
        return self.line(phase, "phase", event="end", counts={}, returncode=returncode,
                         duration_s=60.0, interrupted=None, error=None, **fields)  # fmt: skip

    def lines(self) -> list[str]:
        out = [self.line("l2", "phase", event="start", shard=None, planned=self.l2)]
        out += [self.lifecycle("l2", d, "created healthy init_ok") for d in range(WORKERS)]
        failing = self.rng.sample(range(len(self.l2)), int(len(self.l2) * FAILURE_RATE))
        kinds = {
            i: ("plain", "trigger", "plain", "victim", "plain")[n % 5]
            for n, i in enumerate(failing)
        }
        triggers, victims = [], []
        for index, nodeid in enumerate(self.l2):
            device, kind = index % WORKERS, kinds.get(index)
            if kind is None:
                out.append(self.passed("l2", nodeid, device))
            elif kind == "plain":
                out.append(self.failed("l2", nodeid, device, **_assertion(nodeid)))
            elif kind == "trigger":
                out += self.device_fault("l2", nodeid, device, attempt=1)
                triggers.append(nodeid)
            else:
                out.append(self.line("l2", "poison_skip", selector=nodeid, nodeid=nodeid,
                                     runtime=RUNTIME, worker=_worker("l2", device),
                                     reason=SKIP_REASON))  # fmt: skip
                out.append(self.failed("l2", nodeid, device, outcome="poison_skipped",
                                       message=SKIP_REASON))  # fmt: skip
                victims.append(nodeid)
        out += [self.lifecycle("l2", d, "healthy closed close") for d in range(WORKERS)]
        out.append(self.end("l2", 1))
        return out + self.resource_phase() + self.retry_phase(triggers, victims)

    def resource_phase(self) -> list[str]:
        out = [self.line("resource", "phase", event="start", shard=None, planned=self.resource)]
        for n, nodeid in enumerate(self.resource):
            out.append(self.passed("resource", nodeid, n % WORKERS))
            out.append(self.line(
                "resource", "child", label=nodeid, nodeid=nodeid, returncode=0, signal=None,
                devices=[n % WORKERS], duration_s=3.4, timed_out=False, reached_summary=True,
                tail=f"{nodeid} PASSED\n1 passed in 3.0s", log=f".simpler/logs/c{n}.log",
                not_run=None,
            ))  # fmt: skip
        return [*out, self.end("resource", 0)]

    def retry_phase(self, triggers: list[str], victims: list[str]) -> list[str]:
        out = [self.line("retry", "phase", event="start", shard=None)]
        out.append(self.lifecycle("retry", 0, "created healthy init_ok"))
        out += [self.passed("retry", v, 0, "recovered", attempt=2) for v in victims]
        for n, nodeid in enumerate(triggers):
            if n % 2:
                out.append(self.passed("retry", nodeid, 1, "flaky", attempt=2))
            else:  # fails again on a clean card, and a third time: a real failure
                out += self.device_fault("retry", nodeid, 1, attempt=2)
                out += self.device_fault("retry", nodeid, 1, attempt=3)
        if self.incomplete:
            return out  # the job was cancelled here: no end, no report phase
        out.append(self.end("retry", 1))
        out.append(self.line("report", "phase", event="start", shard=None))
        return [*out, self.end("report", 1)]

    def device_fault(self, phase: str, nodeid: str, device: int, *, attempt: int) -> list[str]:
        return [
            self.lifecycle(phase, device, "healthy poisoned device_error", nodeid),
            self.lifecycle(phase, device, "poisoned force_reset start_force_reset", nodeid),
            self.lifecycle(phase, device, "force_reset rebuilt rebuild_ok", nodeid),
            self.failed(phase, nodeid, device, attempt=attempt, poisoned=True, rc=507046,
                        where="aclrtSynchronizeStreamWithTimeout", **_device_error(device)),
        ]  # fmt: skip


def _worker(phase: str, device: int) -> str:
    process = f"gw{device}" if phase == "l2" else "main"
    return f"a5sim/{RUNTIME}/dev{device}/{process}"


def _assertion(nodeid: str) -> dict[str, str]:
    path = nodeid.split("::")[0]
    frames = "".join(
        f"\n{path}:{40 + n}: in test_matches_golden\n    check(out)" for n in range(12)
    )
    message = "AssertionError: 3 of 4096 elements differ beyond rtol 1e-3 (max diff 0.0625)"
    return {"message": message, "tail": f"{frames}\nE   {message}\n--- Captured stdout ---\nran"}


def _device_error(device: int) -> dict[str, str]:
    message = (
        f"DeviceRuntimeError: a5sim device {device}: rc 507046 at "
        "aclrtSynchronizeStreamWithTimeout: op 'spin' exceeded the op-timeout and was reaped"
    )
    return {"message": message, "tail": f"Traceback (most recent call last):\n{message}\n" * 8}


if __name__ == "__main__":
    for figure in import_figures(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        print(figure)
