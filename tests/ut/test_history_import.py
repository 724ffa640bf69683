"""Report files into the history database: idempotent, order-free, one transaction per run."""

from __future__ import annotations

import gc
import json
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from test_history_attribution import (
    TRIGGER,
    VICTIMS,
    Run,
    another_run,
    hang_with_victims,
    retry_of_a_red_trigger,
    worker_key,
)

from simpler.history import importer
from simpler.history.importer import NotAReport, import_records, import_reports
from simpler.history.run_meta import RunMeta, environment_meta
from simpler.history.schema import HistoryUnusable, connect
from simpler.reporting.report_file import ReportUnreadable

WHERE = {"commit": "3f2c1d0", "branch": "main", "runner": "ci-a5sim-1"}
# The keys each table's rows are listed by; ``imported`` (when a row was written) is left out.
TABLES = {"runs": "run_id", "attempts": "run_id, nodeid, phase, attempt",
          "verdicts": "run_id, nodeid", "run_phases": "run_id, phase, source"}  # fmt: skip


def dump(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    tables = {}
    for table, order in TABLES.items():
        names = [column[1] for column in rows(db, f"PRAGMA table_info({table})")]
        columns = ", ".join(f'"{name}"' for name in names if name != "imported")
        tables[table] = rows(db, f"SELECT {columns} FROM {table} ORDER BY {order}")
    return tables


def load(db: Path, *paths: Path, **options: Any) -> importer.ImportSummary:
    with closing(connect(db)) as conn:
        return import_reports(conn, paths, **{**WHERE, **options})


def rows(db: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(sql, args).fetchall()


def verdicts(db: Path) -> dict[str, list[Any]]:
    query = "SELECT nodeid, outcome, attempts, cause, quarantined FROM verdicts"
    return {nodeid: rest for nodeid, *rest in rows(db, query)}


def test_a_report_becomes_its_run_attempts_and_verdicts(tmp_path: Path) -> None:
    report = hang_with_victims(Run(), reset_fails=True).write(tmp_path / "r.jsonl")
    summary = load(tmp_path / "h.db", report)
    assert (summary.files, summary.runs_new, summary.attempts) == (1, [Run().run], 6)
    assert gc.isenabled()  # the import turns the collector off only while it runs
    run = 'SELECT run_id, "commit", branch, runner, platform, complete, exit_code FROM runs'
    assert rows(tmp_path / "h.db", run) == [(Run().run, *WHERE.values(), "a5sim", 1, 0)]
    final = verdicts(tmp_path / "h.db")
    assert final[TRIGGER] == ["flaky", 2, None, 0]
    assert final[VICTIMS[0]] == ["recovered", 2, None, 0]
    causes = rows(tmp_path / "h.db", "SELECT nodeid, cause FROM attempts WHERE phase = 'l2'")
    assert sorted(causes) == sorted([(TRIGGER, "test"), *((v, "device") for v in VICTIMS)])


def test_the_final_verdict_is_the_latest_attempt_with_its_cause(tmp_path: Path) -> None:
    report = retry_of_a_red_trigger(Run()).write(tmp_path / "r.jsonl")
    load(tmp_path / "h.db", report)
    final = verdicts(tmp_path / "h.db")
    assert final[TRIGGER] == ["failed", 3, "test", 0]
    assert final[VICTIMS[0]] == ["failed", 1, "test", 1]
    assert final[VICTIMS[1]] == ["passed", 1, None, 0]
    assert rows(tmp_path / "h.db", "SELECT exit_code FROM runs") == [(1,)]


def test_importing_again_and_in_any_order_gives_the_same_tables(tmp_path: Path) -> None:
    reports = [
        hang_with_victims(Run(), reset_fails=True).write(tmp_path / "a.jsonl"),
        retry_of_a_red_trigger(another_run(1)).write(tmp_path / "b.jsonl"),
        hang_with_victims(another_run(2), reset_fails=False).write(tmp_path / "c.jsonl"),
    ]
    load(tmp_path / "once.db", *reports)
    load(tmp_path / "twice.db", *reports)
    second = load(tmp_path / "twice.db", *reports)
    load(tmp_path / "reversed.db", *reversed(reports))
    load(tmp_path / "one_by_one.db", reports[1])
    load(tmp_path / "one_by_one.db", reports[2], reports[0])
    assert (second.runs_new, len(second.runs_updated)) == ([], 3)
    once = dump(tmp_path / "once.db")
    assert len(once["runs"]) == 3 and len(once["attempts"]) == 6 + 5 + 4
    for other in ("twice", "reversed", "one_by_one"):
        assert dump(tmp_path / f"{other}.db") == once, other


def shards(tmp_path: Path, *, second_ended: bool = True) -> tuple[Path, Path]:
    """Two matrix jobs of one run (one run id), each its own file, tests and phases."""
    first, second = Run(start=1_000.0), Run(start=1_000.005)
    first.start("l2", shard="1/2").test("l2", TRIGGER, "failed", message="AssertionError")
    first.end("l2", 1).start("report").end("report", 1)
    second.start("l2", shard="2/2").test("l2", VICTIMS[0], "failed", message="AssertionError")
    if second_ended:
        second.end("l2", 1).start("report").end("report", 1)
    return first.write(tmp_path / "shard1.jsonl"), second.write(tmp_path / "shard2.jsonl")


def test_shards_of_one_run_merge_alone_or_together(tmp_path: Path) -> None:
    one, two = shards(tmp_path)
    load(tmp_path / "together.db", one, two)
    load(tmp_path / "apart.db", two)
    load(tmp_path / "apart.db", one)
    together = dump(tmp_path / "together.db")
    assert dump(tmp_path / "apart.db") == together
    ((_, *run),) = rows(tmp_path / "together.db", "SELECT run_id, complete, exit_code FROM runs")
    assert run == [1, 1]
    assert len(together["attempts"]) == 2 and len(together["run_phases"]) == 4


def test_an_incomplete_run_fails_by_the_infrastructure_until_a_later_import_completes_it(
    tmp_path: Path,
) -> None:
    whole = hang_with_victims(Run(), reset_fails=True)
    partial = Run()
    partial.records = whole.records[:-6]  # cancelled in the retry phase
    report = partial.write(tmp_path / "r.jsonl")
    load(tmp_path / "h.db", report)
    causes = "SELECT nodeid, cause, own_cause FROM attempts WHERE phase = 'l2' ORDER BY nodeid"
    assert rows(tmp_path / "h.db", causes) == sorted(
        [(TRIGGER, "infra", "test"), *((v, "infra", "device") for v in VICTIMS)]
    )
    assert rows(tmp_path / "h.db", "SELECT complete, exit_code FROM runs") == [(0, 1)]
    assert verdicts(tmp_path / "h.db")[TRIGGER][2] == "infra"
    whole.write(report)  # the same file, grown: the rest of the run's records
    load(tmp_path / "h.db", report)
    assert rows(tmp_path / "h.db", causes) == sorted(
        [(TRIGGER, "test", "test"), *((v, "device", "device") for v in VICTIMS)]
    )
    assert rows(tmp_path / "h.db", "SELECT complete, exit_code, ended FROM runs") == [
        (1, 0, whole.records[-1]["ts"])
    ]
    load(tmp_path / "fresh.db", report)
    assert dump(tmp_path / "h.db") == dump(tmp_path / "fresh.db")


def test_a_shard_still_running_keeps_the_run_incomplete(tmp_path: Path) -> None:
    one, two = shards(tmp_path, second_ended=False)
    load(tmp_path / "h.db", one, two)
    causes = "SELECT nodeid, cause FROM attempts ORDER BY nodeid"
    verdicts = "SELECT nodeid, cause FROM verdicts ORDER BY nodeid"
    assert rows(tmp_path / "h.db", "SELECT complete FROM runs") == [(0,)]
    assert rows(tmp_path / "h.db", causes) == [(TRIGGER, "infra"), (VICTIMS[0], "infra")]
    assert rows(tmp_path / "h.db", verdicts) == [(TRIGGER, "infra"), (VICTIMS[0], "infra")]
    one, two = shards(tmp_path, second_ended=True)
    load(tmp_path / "h.db", two)  # only the shard that was cut short, now whole
    assert rows(tmp_path / "h.db", "SELECT complete FROM runs") == [(1,)]
    assert rows(tmp_path / "h.db", causes) == [(TRIGGER, "test"), (VICTIMS[0], "test")]
    assert rows(tmp_path / "h.db", verdicts) == [(TRIGGER, "test"), (VICTIMS[0], "test")]


def test_an_older_shorter_copy_of_a_report_undoes_nothing(tmp_path: Path) -> None:
    whole = hang_with_victims(Run(), reset_fails=True)
    older = Run()
    older.records = whole.records[: len(whole.records) // 2]
    load(tmp_path / "h.db", whole.write(tmp_path / "whole.jsonl"))
    before = dump(tmp_path / "h.db")
    load(tmp_path / "h.db", older.write(tmp_path / "older.jsonl"))
    assert dump(tmp_path / "h.db") == before


def test_a_plain_skip_in_another_file_never_hides_a_poison_skip(tmp_path: Path) -> None:
    registered = Run(start=1_000.0).start("l2").poison_skip("l2", VICTIMS[0], worker_key())
    skipped = Run(start=2_000.0).start("l2").test("l2", VICTIMS[0], "skipped")
    registered.end("l2", 1)
    skipped.end("l2")
    files = registered.write(tmp_path / "a.jsonl"), skipped.write(tmp_path / "b.jsonl")
    load(tmp_path / "forward.db", *files)
    load(tmp_path / "backward.db", *reversed(files))
    outcome = "SELECT outcome, cause FROM attempts"
    assert rows(tmp_path / "forward.db", outcome) == [("poison_skipped", "device")]
    assert dump(tmp_path / "backward.db") == dump(tmp_path / "forward.db")


def test_the_later_record_of_one_attempt_wins_whichever_file_comes_first(tmp_path: Path) -> None:
    early = Run(start=1_000.0).start("retry").test("retry", TRIGGER, "failed", attempt=2)
    late = Run(start=2_000.0).start("retry").test("retry", TRIGGER, "flaky", attempt=2)
    files = early.write(tmp_path / "early.jsonl"), late.write(tmp_path / "late.jsonl")
    load(tmp_path / "forward.db", *files)
    load(tmp_path / "backward.db", *reversed(files))
    outcome = "SELECT outcome, cause FROM attempts"
    assert rows(tmp_path / "forward.db", outcome) == [("flaky", None)]
    assert dump(tmp_path / "backward.db") == dump(tmp_path / "forward.db")


@pytest.mark.parametrize("killed_at", ["attempts", "suite"])
def test_a_killed_import_leaves_the_database_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, killed_at: str
) -> None:
    whole = hang_with_victims(Run(), reset_fails=True)
    partial = Run()
    partial.records = whole.records[:-6]
    load(tmp_path / "h.db", partial.write(tmp_path / "r.jsonl"))
    before = dump(tmp_path / "h.db")
    real = importer._write_attempts

    def dies_after_writing(conn: sqlite3.Connection, attempts: Any, **how: bool) -> int:
        real(conn, attempts, **how)  # the rows are in the database's transaction: then the kill
        raise KeyboardInterrupt

    if killed_at == "attempts":
        monkeypatch.setattr(importer, "_write_attempts", dies_after_writing)
    else:  # the last statement before the commit fails, after the verdicts were written

        def disk_fails(*args: object) -> str:
            raise sqlite3.OperationalError("disk I/O error")

        monkeypatch.setattr(importer, "record_suite", disk_fails)
    with pytest.raises((KeyboardInterrupt, sqlite3.OperationalError)):
        load(tmp_path / "h.db", whole.write(tmp_path / "r.jsonl"))  # the run, completed
    assert dump(tmp_path / "h.db") == before


def test_each_run_is_its_own_transaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    later = retry_of_a_red_trigger(another_run(1))
    both = tmp_path / "both.jsonl"
    first = hang_with_victims(Run(), reset_fails=True).write(tmp_path / "a.jsonl")
    both.write_text(first.read_text() + later.write(tmp_path / "b.jsonl").read_text())
    real = importer._write_attempts

    def dies_on_the_second_run(conn: sqlite3.Connection, attempts: Any, **how: bool) -> int:
        rows = [row for shape in attempts.values() for row in shape]  # by shape, run id first
        if rows[0][0] == later.run:
            raise RuntimeError("killed")
        return real(conn, attempts, **how)

    monkeypatch.setattr(importer, "_write_attempts", dies_on_the_second_run)
    with pytest.raises(RuntimeError):
        load(tmp_path / "h.db", both)
    assert rows(tmp_path / "h.db", "SELECT run_id FROM runs") == [(Run().run,)]
    monkeypatch.undo()
    load(tmp_path / "h.db", both)
    load(tmp_path / "whole.db", both)
    assert dump(tmp_path / "h.db") == dump(tmp_path / "whole.db")


IMPORTER = """
import sys
from contextlib import closing
from pathlib import Path
from simpler.history.importer import import_reports
from simpler.history.schema import connect
conn = connect(Path(sys.argv[1]))
import_reports(conn, sys.argv[2:], commit="3f2c1d0", branch="main", runner="ci-a5sim-1")
conn.close()
"""


def test_two_imports_at_once_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    reports = [
        hang_with_victims(another_run(i), reset_fails=bool(i % 2)).write(tmp_path / f"{i}.jsonl")
        for i in range(24)
    ]
    connect(tmp_path / "h.db").close()
    halves = [[str(p) for p in reports[:16]], [str(p) for p in reversed(reports[8:])]]
    jobs = [
        subprocess.Popen([sys.executable, "-c", IMPORTER, str(tmp_path / "h.db"), *half])
        for half in halves
    ]
    assert [job.wait() for job in jobs] == [0, 0]
    load(tmp_path / "alone.db", *reports)
    assert dump(tmp_path / "h.db") == dump(tmp_path / "alone.db")


def test_a_file_that_is_not_a_report_is_refused_in_one_line(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("remember to import the reports\nand the second line\n")
    image = tmp_path / "plot.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00" + bytes(range(256)))
    foreign = tmp_path / "other.jsonl"
    foreign.write_text('{"level": "info", "msg": "a log, not a report"}\n[1, 2]\n')
    for path in (text, image, foreign):
        with pytest.raises(NotAReport) as refused:
            load(tmp_path / "h.db", path)
        assert str(path) in str(refused.value) and "\n" not in str(refused.value)
        with pytest.raises(NotAReport):  # no line is read as the run's: still not a report
            load(tmp_path / "h.db", path, only_run=Run().run)
    assert dump(tmp_path / "h.db")["runs"] == []


def test_an_empty_report_imports_nothing_and_unreadable_files_are_named(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    summary = load(tmp_path / "h.db", tmp_path / "empty.jsonl")
    assert (summary.files, summary.runs_new, summary.malformed) == (1, [], 0)
    with pytest.raises(ReportUnreadable) as unreadable:  # an OSError: exit 3
        load(tmp_path / "h.db", tmp_path)  # a folder
    assert str(tmp_path) in str(unreadable.value)
    (tmp_path / "text.db").write_text("not a database, though long enough to have a header\n")
    with pytest.raises(HistoryUnusable):
        connect(tmp_path / "text.db")


def test_malformed_lines_are_counted_and_skipped(tmp_path: Path) -> None:
    report = hang_with_victims(Run(), reset_fails=True).write(tmp_path / "r.jsonl")
    lines = report.read_bytes().splitlines(keepends=True)
    torn = lines[3][:40] + b"\n"
    two_on_one_line = lines[4].rstrip(b"\n") + lines[4]
    report.write_bytes(
        b"".join([*lines[:3], torn, b'{"type": "test", "nodeid": "caf\xe9"}\n', b"\n",
                  b'{"not": "a record"}\n', two_on_one_line, *lines[3:]])
    )  # fmt: skip
    summary = load(tmp_path / "h.db", report)
    load(
        tmp_path / "clean.db",
        hang_with_victims(Run(), reset_fails=True).write(tmp_path / "c.jsonl"),
    )
    assert summary.malformed == 4
    assert dump(tmp_path / "h.db")["attempts"] == dump(tmp_path / "clean.db")["attempts"]


def test_a_record_only_json_reads_is_still_a_record(tmp_path: Path) -> None:
    # orjson refuses NaN, which json (and so the report's other readers) reads: such a
    # line is judged by json's rules, not skipped as malformed.
    report = hang_with_victims(Run(), reset_fails=True).write(tmp_path / "r.jsonl")
    lines = report.read_text().splitlines(keepends=True)
    tests = [n for n, line in enumerate(lines) if json.loads(line)["type"] == "test"]
    record = json.loads(lines[tests[0]])
    lines[tests[0]] = json.dumps({**record, "duration_s": float("nan")}) + "\n"
    assert "NaN" in lines[tests[0]]
    report.write_text("".join(lines))
    summary = load(tmp_path / "h.db", report)
    assert summary.malformed == 0
    stored = rows(
        tmp_path / "h.db", "SELECT nodeid FROM attempts WHERE nodeid = ?", record["nodeid"]
    )
    assert stored


def test_one_run_of_a_long_report_file_can_be_imported_alone(tmp_path: Path) -> None:
    older = hang_with_victims(Run(), reset_fails=True)
    newer = retry_of_a_red_trigger(another_run(1))
    report = tmp_path / "report.jsonl"
    report.write_text(
        older.write(tmp_path / "a").read_text() + newer.write(tmp_path / "b").read_text()
    )
    summary = load(tmp_path / "h.db", report, only_run=newer.run)
    assert summary.runs_new == [newer.run]
    assert rows(tmp_path / "h.db", "SELECT run_id FROM runs") == [(newer.run,)]
    load(tmp_path / "whole.db", tmp_path / "b")
    assert dump(tmp_path / "h.db") == dump(tmp_path / "whole.db")


def test_records_handed_over_in_memory_merge_with_the_same_file_read_later(
    tmp_path: Path,
) -> None:
    run = hang_with_victims(Run(), reset_fails=True)
    report = run.write(tmp_path / "r.jsonl")
    with closing(connect(tmp_path / "h.db")) as conn:
        summary = import_records(conn, run.records, source=str(report), only_run=run.run, **WHERE)
    assert summary.runs_new == [run.run]
    before = dump(tmp_path / "h.db")
    load(tmp_path / "h.db", report)
    assert dump(tmp_path / "h.db") == before


def test_records_without_a_run_id_are_one_run_that_a_grown_file_completes(tmp_path: Path) -> None:
    run = Run(run="")
    run.start("l2").test("l2", TRIGGER, "passed")
    report = run.write(tmp_path / "plain.jsonl")
    load(tmp_path / "h.db", report)
    run.test("l2", VICTIMS[0], "failed", message="AssertionError").end("l2", 1)
    run.write(report)
    load(tmp_path / "h.db", report)
    ((run_id, complete),) = rows(tmp_path / "h.db", "SELECT run_id, complete FROM runs")
    assert run_id.startswith("file-") and complete == 1
    assert len(rows(tmp_path / "h.db", "SELECT * FROM attempts")) == 2


def test_what_the_caller_names_wins_and_the_environment_only_fills_gaps(tmp_path: Path) -> None:
    report = hang_with_victims(Run(), reset_fails=True).write(tmp_path / "r.jsonl")
    load(tmp_path / "h.db", report)
    load(tmp_path / "h.db", report, commit=None, branch=None, runner=None)
    where = 'SELECT "commit", branch, runner FROM runs'
    assert rows(tmp_path / "h.db", where) == [tuple(WHERE.values())]
    load(tmp_path / "h.db", report, commit="9e8d7c6")
    assert rows(tmp_path / "h.db", where) == [("9e8d7c6", "main", "ci-a5sim-1")]


def test_github_actions_names_the_commit_branch_and_runner(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"head": {"sha": "headsha"}}}))
    push = {"GITHUB_SHA": "mergesha", "GITHUB_REF_NAME": "main", "RUNNER_NAME": "gpu-box-3"}
    assert environment_meta(push, cwd=tmp_path) == RunMeta("mergesha", "main", "gpu-box-3")
    pull = {**push, "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event),
            "GITHUB_HEAD_REF": "fix-flake", "SIMPLER_RUNNER": "a2a3-rack-1"}  # fmt: skip
    meta = environment_meta(pull, cwd=tmp_path)
    assert (meta.commit, meta.branch, meta.runner) == ("headsha", "fix-flake", "a2a3-rack-1")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_names_the_commit_and_branch_of_a_work_tree(tmp_path: Path) -> None:
    outside = environment_meta({}, cwd=tmp_path)  # the runner: the host name
    assert (outside.commit, outside.branch, bool(outside.runner)) == (None, None, True)
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q", "-b", "trunk"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "first"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True)
    inside = environment_meta({}, cwd=tmp_path)
    assert (inside.commit, inside.branch) == (head.stdout.strip(), "trunk")
    subprocess.run([*git, "checkout", "-q", "--detach"], check=True)
    assert environment_meta({}, cwd=tmp_path).branch is None  # detached: no branch to name


def test_a_missing_working_folder_is_no_traceback(tmp_path: Path) -> None:
    meta = environment_meta({}, cwd=tmp_path / "gone")
    assert (meta.commit, meta.branch) == (None, None)


def test_files_read_side_by_side_are_stored_in_order_up_to_one_that_is_not_a_report(
    tmp_path: Path,
) -> None:
    # Several files are read by worker processes; the error of the third must still leave the
    # first two stored and the fourth untouched, as reading them one at a time would.
    first = hang_with_victims(Run(), reset_fails=True).write(tmp_path / "a.jsonl")
    second = retry_of_a_red_trigger(another_run(1)).write(tmp_path / "b.jsonl")
    text = tmp_path / "notes.txt"
    text.write_text("not a report\n")
    fourth = hang_with_victims(another_run(2), reset_fails=False).write(tmp_path / "c.jsonl")
    with pytest.raises(NotAReport):
        load(tmp_path / "h.db", first, second, text, fourth)
    load(tmp_path / "one_by_one.db", first)
    load(tmp_path / "one_by_one.db", second)
    assert dump(tmp_path / "h.db") == dump(tmp_path / "one_by_one.db")
