"""An import into a server that ends mid-way: its process killed, its connection lost. The run
it was storing stays as it was, and the next import of the same file completes it.

Mid-way is made exact, not hoped for: the test holds the verdicts table, which every import
of a run writes after the run's row, its phases and its attempts, so the importer waits
there, inside its transaction, until the test has ended it.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest
from history_tables import every_row, held_table, wait_for_waiters, wait_until_alone
from postgres_server import PASSWORD
from processes import ROOT, python_m, run_python_m, simpler_env

from simpler.history.store import open_store


def _report(path: Path, runs: range) -> Path:
    """Report lines of ``runs`` (a run each, of two tests; the second's test fails)."""
    lines = []
    for number in runs:
        run = f"faults-{number:02d}"
        lines.append(
            f'{{"schema":1,"run":"{run}","ts":{1_796_000_000 + number},"phase":"l2",'
            f'"type":"phase","event":"start","shard":null}}\n'
        )
        for attempt, (name, outcome) in enumerate((("a", "passed"), ("b", "failed")), 1):
            lines.append(
                f'{{"schema":1,"run":"{run}","ts":{1_796_000_000 + number + attempt},'
                f'"phase":"l2","type":"test","nodeid":"t.py::test_{name}","outcome":"{outcome}",'
                f'"attempt":1,"duration_s":0.5,"message":"","tail":"","rc":null,"where":null}}\n'
            )
        lines.append(
            f'{{"schema":1,"run":"{run}","ts":{1_796_000_010 + number},"phase":"l2",'
            f'"type":"phase","event":"end","returncode":1,"duration_s":9.5}}\n'
        )
    path.write_text("".join(lines))
    return path


def _import(store: Path | str, report: Path) -> subprocess.CompletedProcess[str]:
    return run_python_m("simpler", "history", "import", str(report), "--db", str(store))


def _import_held(url: str, report: Path) -> tuple[subprocess.Popen[str], int]:
    """The import started and waiting mid-way, in its transaction; its server pid."""
    importer = subprocess.Popen(
        python_m("simpler", "history", "import", str(report), "--db", url),
        cwd=ROOT, env=simpler_env(), text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    (backend,) = wait_for_waiters(url, [importer])
    return importer, backend


@pytest.fixture
def stored_before(postgres_url: str, tmp_path: Path) -> Path:
    """The server with the first half of a run (its report as it stood mid-run); the report
    grown since, that run whole and two more, to import next."""
    open_store(postgres_url).close()
    report = _report(tmp_path / "report.jsonl", range(1, 4))
    first = tmp_path / "first.jsonl"
    first.write_text("".join(report.read_text().splitlines(keepends=True)[:2]))
    assert _import(postgres_url, first).returncode == 0
    return report


def _completed_as_one_import_gives(url: str, report: Path, tmp_path: Path) -> None:
    again = _import(url, report)
    assert again.returncode == 0, again.stderr
    reference = tmp_path / "reference.db"
    for name in ("first.jsonl", "report.jsonl"):
        assert _import(reference, tmp_path / name).returncode == 0
    assert every_row(url) == every_row(reference)
    assert len(every_row(url)["runs"]) == 3


def _end_mid_import(
    url: str, report: Path, end: Callable[[int, int], None]
) -> tuple[str, str, int]:
    """The import of ``report`` held inside its transaction, ended there by ``end(its pid,
    its server pid)``; what it printed and its exit. The run is then checked as it was."""
    before = every_row(url)
    assert before["runs"][0][7] == 0  # incomplete: the import below completes it
    with held_table(url, "verdicts"):
        importer, backend = _import_held(url, report)
        end(importer.pid, backend)
        out, err = importer.communicate(timeout=60)
    wait_until_alone(url)  # a killed client's session ends once the server sees it gone
    assert every_row(url) == before
    return out, err, importer.returncode


def test_a_killed_import_leaves_its_run_as_it_was_and_the_next_completes_it(
    postgres_url: str, stored_before: Path, tmp_path: Path
) -> None:
    def cancelled(pid: int, _: int) -> None:
        os.kill(pid, signal.SIGKILL)  # a cancelled CI job: no clean-up of its own

    _end_mid_import(postgres_url, stored_before, cancelled)
    _completed_as_one_import_gives(postgres_url, stored_before, tmp_path)


def test_a_lost_connection_is_one_line_exit_3_and_the_next_import_completes_it(
    postgres_url: str, stored_before: Path, tmp_path: Path
) -> None:
    def cut_off(_: int, backend: int) -> None:
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (backend,))

    out, err, code = _end_mid_import(postgres_url, stored_before, cut_off)
    assert code == 3, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "127.0.0.1:" in lines[0] and PASSWORD not in out + err
    _completed_as_one_import_gives(postgres_url, stored_before, tmp_path)
