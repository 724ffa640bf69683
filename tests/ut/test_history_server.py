"""The history on a PostgreSQL server the session starts (tests/postgres_server.py): the URL,
the schema version kept on the server, and bad input as one line that never holds the password."""

from __future__ import annotations

import socket
import sqlite3
from contextlib import closing
from pathlib import Path

import psycopg
import pytest
from postgres_server import PASSWORD, PostgresServer
from test_history_attribution import Run, another_run, hang_with_victims
from test_history_cli import one_line, run_cli

from simpler.history.schema import DDL, SCHEMA_VERSION
from simpler.history.store import open_store, store_label


@pytest.fixture
def report(tmp_path: Path) -> Path:
    return hang_with_victims(Run(), reset_fails=True).write(tmp_path / "report.jsonl")


def _refused_cleanly(code: int, out: str, err: str, *named: str) -> str:
    line = one_line(err)
    assert code == 3, err
    assert PASSWORD not in out + err
    for name in named:
        assert name in line
    return line


def test_an_import_into_a_server_reads_back_as_from_a_file(
    postgres_url: str, report: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "history.db"
    code, out, err = run_cli(capsys, "import", str(report), "--db", postgres_url)
    assert code == 0, err
    assert "-> postgresql://simpler:***@127.0.0.1" in out and PASSWORD not in out + err
    code, _, err = run_cli(capsys, "import", str(report), "--db", str(file))
    assert code == 0, err
    said = [
        run_cli(capsys, "flaky", "--format", "json", "--db", db)[1]
        for db in (postgres_url, str(file))
    ]
    assert said[0] == said[1] and said[0].startswith("[")


def test_the_environment_names_a_server_too(
    postgres_url: str,
    report: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SIMPLER_HISTORY", postgres_url)
    code, _, err = run_cli(capsys, "import", str(report))
    assert code == 0, err
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT count(*) FROM runs").fetchone() == (1,)


def test_a_url_that_does_not_parse_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for url in (
        f"postgresql://simpler:{PASSWORD}@127.0.0.1:port/history",
        f"postgres://simpler:{PASSWORD}@/",
    ):
        code, out, err = run_cli(capsys, "flaky", "--db", url)
        assert code == 2, err
        assert "does not parse" in one_line(err)
        assert PASSWORD not in out + err


def test_a_refused_connection_names_host_and_database_and_exit_3(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql://simpler:{PASSWORD}@127.0.0.1:{port}/history?connect_timeout=5"
    for argv in (["flaky"], ["import", __file__]):
        code, out, err = run_cli(capsys, *argv, "--db", url)
        _refused_cleanly(code, out, err, f"127.0.0.1:{port}/history")


def test_a_wrong_password_names_host_and_database_and_shows_neither_password(
    postgres_server: PostgresServer, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    database = postgres_url.rpartition("/")[2]
    wrong = postgres_server.url(database, password="pw-WRONG-17")
    code, out, err = run_cli(capsys, "flaky", "--db", wrong)
    line = _refused_cleanly(code, out, err, f"{postgres_server.port}/{database}")
    assert "password" in line and "pw-WRONG-17" not in line


def test_a_database_that_does_not_exist_names_it_and_exit_3(
    postgres_server: PostgresServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = postgres_server.url("no_such_history")
    code, out, err = run_cli(capsys, "flaky", "--db", url)
    _refused_cleanly(code, out, err, "no_such_history", "127.0.0.1")


def test_libpq_parameters_pass_through_the_url(
    postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    conn = open_store(postgres_url + "?application_name=simpler-history-test")
    try:
        assert conn.execute("SHOW application_name").fetchone() == ("simpler-history-test",)
    finally:
        conn.close()
    # This server speaks no TLS: sslmode=require reaching libpq is what refuses it.
    code, out, err = run_cli(capsys, "flaky", "--db", postgres_url + "?sslmode=require")
    assert "SSL" in _refused_cleanly(code, out, err, "127.0.0.1")


def test_a_password_in_the_query_string_is_masked_too() -> None:
    label = store_label(f"postgresql://h/db?sslmode=require&password={PASSWORD}&x=1")
    assert PASSWORD not in label and "sslmode=require" in label and "x=1" in label
    assert store_label(f"postgresql://u:{PASSWORD}@h:5/db") == "postgresql://u:***@h:5/db"
    assert store_label("runs:2024.db") == "runs:2024.db"  # a path with a colon stays a path


def test_the_schema_version_is_kept_on_the_server(postgres_url: str) -> None:
    open_store(postgres_url).close()
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT version FROM simpler_schema").fetchall() == [(SCHEMA_VERSION,)]


def test_an_older_schema_is_upgraded_in_place(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE simpler_schema (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO simpler_schema VALUES (1)")
        for statement in DDL.replace(" REAL", " DOUBLE PRECISION").split(";"):
            statement = statement.replace(") WITHOUT ROWID", ")")
            if "duration_s  REAL" not in statement and statement.strip():
                conn.execute(statement)
        conn.execute("ALTER TABLE run_phases DROP COLUMN duration_s")  # schema 1 lacked it
        for table in ("impact_maps", "impact_blocks", "impact_tests"):  # and schema 3's
            conn.execute(f"DROP TABLE {table}")
        for table in ("affected_runs", "affected_selected"):  # and schema 4's
            conn.execute(f"DROP TABLE {table}")
        conn.execute("INSERT INTO runs (run_id) VALUES ('kept')")
    open_store(postgres_url).close()
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT version FROM simpler_schema").fetchall() == [(SCHEMA_VERSION,)]
        assert conn.execute("SELECT run_id FROM runs").fetchall() == [("kept",)]
        conn.execute("SELECT duration_s FROM run_phases")
        conn.execute("SELECT map_id, nodeid, file, qualname FROM impact_tests")
        conn.execute(
            "SELECT run_id, since, map_commit, run_all, selected, tests FROM affected_runs"
        )
        conn.execute("SELECT run_id, nodeid FROM affected_selected")


def test_a_newer_schema_is_refused_in_one_line(
    postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    open_store(postgres_url).close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(
            "UPDATE simpler_schema SET version = ?".replace("?", "%s"), (SCHEMA_VERSION + 1,)
        )
    for argv in (["flaky"], ["import", __file__]):
        code, out, err = run_cli(capsys, *argv, "--db", postgres_url)
        assert "newer than this simpler's" in _refused_cleanly(code, out, err, "127.0.0.1")


def test_a_read_of_a_server_with_no_history_is_one_line(
    postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "flaky", "--db", postgres_url)
    assert "holds no history" in _refused_cleanly(code, out, err, "127.0.0.1")


def _every_row(db: Path) -> dict[str, list[tuple[object, ...]]]:
    with closing(sqlite3.connect(db)) as conn:
        return {
            table: sorted(conn.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
            for table in ("runs", "attempts", "verdicts", "run_phases", "suite_tests")
        }


def test_copy_round_trips_a_file_through_a_server_with_nothing_changed(
    postgres_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = tmp_path / "original.db"
    runs = [hang_with_victims(another_run(n), reset_fails=n == 1) for n in (1, 2, 3)]
    for index, run in enumerate(runs):
        report = run.write(tmp_path / f"report-{index}.jsonl")
        assert run_cli(capsys, "import", str(report), "--db", str(original))[0] == 0
    back = tmp_path / "back.db"
    for source, target in (
        (original, postgres_url),
        (original, postgres_url),
        (postgres_url, back),
    ):
        code, out, err = run_cli(capsys, "copy", str(source), str(target))
        assert code == 0, err
        assert f"copied {len(runs)} run(s)" in out and PASSWORD not in out + err
    assert _every_row(back) == _every_row(original)
    code, out, err = run_cli(capsys, "copy", str(original), str(back))  # again: nothing changes
    assert code == 0, err
    assert _every_row(back) == _every_row(original)
    said = [
        run_cli(capsys, "flaky", "--format", "json", "--db", db)[1]
        for db in (postgres_url, str(back))
    ]
    assert said[0] == said[1]
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT count(*) FROM runs").fetchone() == (len(runs),)


def test_copy_from_a_file_that_does_not_exist_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(capsys, "copy", str(tmp_path / "none.db"), str(tmp_path / "to.db"))
    assert code == 2 and "no history database" in one_line(err)
    assert not (tmp_path / "to.db").exists()


def test_a_percent_sign_in_a_statement_reaches_the_server_as_written(postgres_url: str) -> None:
    conn = open_store(postgres_url)
    try:
        for parameters in ((), ("x",)):
            sql = "SELECT 'a%b' || ?" if parameters else "SELECT 'a%b'"
            assert conn.execute(sql, parameters).fetchone()[0].startswith("a%b")
    finally:
        conn.close()
