"""The bench's history (runs as a large device suite's CI writes them: plain failures, device
faults and their victims, retries, incomplete runs) on a server and in a file: the same
rows and the same answer from every reader. A smaller share of the bench's runs, so that it
fits a test: 12 runs of 300 tests, three runs a commit, four runners."""

from __future__ import annotations

import html
import json
import re
import sys
from pathlib import Path

import pytest
from history_tables import every_row

from simpler import cli
from simpler.history.importer import import_reports
from simpler.history.store import open_store, store_label, store_title

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from bench_history_import import write_bench_reports


def main(argv: list[str]) -> int:
    """``simpler history`` with ``argv``, as the command line has it."""
    return cli.main(["history", *argv])


RUNS, TESTS = 12, 300


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return write_bench_reports(tmp_path_factory.mktemp("bench"), runs=RUNS, tests=TESTS)


def _history(store: str, reports: list[Path], order: list[int]) -> str:
    """The reports imported in ``order``, each with its run's commit and runner, as the
    bench imports them (three runs a commit, four runners)."""
    conn = open_store(store)
    try:
        for index in order:
            import_reports(
                conn, [reports[index]], commit=f"{index // 3:040x}", branch="main",
                runner=f"ci-{index % 4}",
            )  # fmt: skip
    finally:
        conn.close()
    return store


def _answers(store: str, out: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    out.mkdir()

    def said(*args: str) -> str:
        assert main([*args, "--db", store]) == 0
        return capsys.readouterr().out.replace(str(out), "OUT").replace(store_label(store), "DB")

    answers = {
        "flaky json": said("flaky", "--format", "json"),
        "flaky markdown": said("flaky", "--format", "markdown", "--runs", "6"),
        "flaky table": said("flaky", "--min-runs", "2"),
        "suggest": said(
            "quarantine", "--suggest", "--owner", "ops", "--quarantine", str(out / "q.toml")
        ),
        "durations": said("durations", "--out", str(out / "durations.json")),
        "html": said("html", str(out / "history.html")),
    }
    failing = [s["nodeid"] for s in json.loads(answers["flaky json"]) if s["failed_test"]]
    assert failing, "the bench's history has failures to show"
    answers["show"] = said("show", failing[0])
    answers["durations.json"] = (out / "durations.json").read_text()
    page = (out / "history.html").read_text().replace(html.escape(store_title(store)), "DB")
    answers["page"] = re.sub(r"generated [-\d: ]+UTC", "generated WHEN", page)
    return answers


def test_the_bench_history_on_a_server_answers_as_in_a_file(
    reports: list[Path], postgres_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = _history(str(tmp_path / "history.db"), reports, list(range(RUNS)))
    server = _history(postgres_url, reports, list(reversed(range(RUNS))))  # the same rows
    assert every_row(Path(file)) == every_row(server)
    in_file = _answers(file, tmp_path / "file", capsys)
    on_server = _answers(server, tmp_path / "server", capsys)
    for name, answer in in_file.items():
        assert on_server[name] == answer, name
