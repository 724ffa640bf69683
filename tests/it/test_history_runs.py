"""Ten seeded runs of a small device suite, imported into the history as a team's CI would.

The suite (scenarios/scenario_history_suite.py) has two stable tests, one broken test, one
test a device fault is injected into on its first attempt in runs 2, 5 and 8 (so it fails
and passes on its retry: flaky), and its victim, poison-skipped in runs 5 and 8 where the
card cannot be reset and recovered by the retry phase. Whatever the order the reports are
imported in, and however often, the history must say the same: the fault's trigger is
flaky, the broken test broken, and the victim stable with two failures that were the
device's.
"""

from __future__ import annotations

import html
import json
import random
import re
import sqlite3
import subprocess
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import headless_chromium
import pytest
from history_page_dom import read_rows
from history_tables import every_row, held_table, wait_for_waiters
from postgres_server import PASSWORD, PostgresServer
from processes import python_m, run_python_m, simpler_env

from simpler import report
from simpler.history.store import store_title
from simpler.scheduler.durations import load_measurements

ROOT = Path(__file__).resolve().parents[2]
SUITE = "tests/it/scenarios/scenario_history_suite.py"
STABLE = [f"{SUITE}::TestStable::test_noop", f"{SUITE}::TestStable::test_add"]
BROKEN = f"{SUITE}::TestBroken::test_always_fails"
FLAKY = f"{SUITE}::TestFlaky::test_launch"
VICTIM = f"{SUITE}::TestVictim::test_add_after_the_fault"
RUNS = 10
FLAKY_RUNS = {2, 5, 8}  # the fault on TestFlaky's first attempt
STUCK_CARD_RUNS = {5, 8}  # ... and a card no force reset heals: its victim is poison-skipped


def _simpler(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_python_m("simpler", *args, env=simpler_env(env))


def _seeded_run(number: int, out: Path) -> Path:
    faults = []
    if number in FLAKY_RUNS:
        faults.append("hang@TestFlaky#1")
    if number in STUCK_CARD_RUNS:
        faults.append("force_reset_fail")
    path = out / f"run-{number:02d}.jsonl"
    device = str(number % 2)  # two runs at a time, each on a card of its own
    run = _simpler(
        "run", "--platform", "a5sim", "--device", device, "--report", str(path),
        "--run-id", f"seeded-{number:02d}", "--", SUITE,
        env={"SIMPLER_SIM_FAULTS": ",".join(faults)},
    )  # fmt: skip
    # The broken test fails every run: red, and nothing else is.
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-2000:]
    return path


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("seeded")
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda n: _seeded_run(n, out), range(1, RUNS + 1)))


def _import_args(db: Path | str, path: Path) -> tuple[str, ...]:
    """``history import`` of one report (or a shard of it: run-03.l2.jsonl) as CI types it."""
    number = int(path.name.split("-")[1].split(".")[0])
    return (
        "history", "import", str(path), "--db", str(db),
        "--commit", f"c{number:02d}", "--branch", "main", "--runner", f"host-{number % 2}",
    )  # fmt: skip


def _import(db: Path | str, paths: list[Path]) -> None:
    for path in paths:
        imported = _simpler(*_import_args(db, path))
        assert imported.returncode == 0, imported.stderr


def _flaky(db: Path | str) -> list[dict[str, Any]]:
    shown = _simpler("history", "flaky", "--db", str(db), "--format", "json")
    assert shown.returncode == 0, shown.stderr
    scores: list[dict[str, Any]] = json.loads(shown.stdout)
    return scores


@pytest.fixture(scope="module")
def history(reports: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("history") / "history.db"
    _import(db, reports)
    return db


def test_any_order_and_twice_give_the_same_table(
    reports: list[Path], history: Path, tmp_path: Path
) -> None:
    shuffled = list(reports)
    random.Random(24).shuffle(shuffled)
    again = tmp_path / "again.db"
    _import(again, shuffled)
    _import(again, list(reversed(reports)))
    assert _flaky(again) == _flaky(history)
    assert every_row(again) == every_row(history)
    assert len(every_row(again)["runs"]) == RUNS


def test_the_victim_is_stable_and_its_failures_were_the_device(history: Path) -> None:
    scores = {s["nodeid"]: s for s in _flaky(history)}
    victim = scores[VICTIM]
    assert (victim["runs"], victim["passed"], victim["failed_test"]) == (RUNS, RUNS, 0)
    assert victim["failed_device"] == len(STUCK_CARD_RUNS)
    assert victim["state"] == "stable"
    flaky = scores[FLAKY]
    assert flaky["state"] == "flaky"
    assert flaky["pass_on_retry"] == len(FLAKY_RUNS) == flaky["failed_test"]
    assert flaky["failed_device"] == 0
    broken = scores[BROKEN]
    assert broken["state"] == "broken"
    assert broken["failed_test"] == RUNS and broken["passed"] == 0
    for nodeid in STABLE:
        assert scores[nodeid]["state"] == "stable"
        assert scores[nodeid]["failed_test"] == scores[nodeid]["failed_device"] == 0
    ranked = [s["nodeid"] for s in _flaky(history)]
    assert ranked.index(BROKEN) < ranked.index(FLAKY) < ranked.index(VICTIM)


def _run_numbers_oldest_first(db: Path) -> list[int]:
    """The seeded runs in the order they started (two ran at a time, so not 1..10)."""
    with closing(sqlite3.connect(db)) as conn:  # its own with commits, never closes
        rows = conn.execute("SELECT run_id FROM runs ORDER BY started, run_id").fetchall()
    return [int(run_id.rsplit("-", 1)[1]) for (run_id,) in rows]


def test_show_marks_the_device_runs_of_the_victim(history: Path) -> None:
    order = _run_numbers_oldest_first(history)
    shown = _simpler("history", "show", VICTIM, "--db", str(history))
    assert shown.returncode == 0, shown.stderr
    # Recovered by the retry, the victim's runs are still the device's, never "R".
    assert "".join("D" if n in STUCK_CARD_RUNS else "." for n in order) in shown.stdout
    assert "flips: none" in shown.stdout
    flaky = _simpler("history", "show", FLAKY, "--db", str(history))
    assert "".join("R" if n in FLAKY_RUNS else "." for n in order) in flaky.stdout


def test_durations_from_the_history_feed_the_scheduler(history: Path, tmp_path: Path) -> None:
    out = tmp_path / "durations.json"
    written = _simpler("history", "durations", "--db", str(history), "--out", str(out))
    assert written.returncode == 0, written.stderr
    measured = load_measurements(out)
    for nodeid in STABLE:
        assert measured[nodeid].count == RUNS
        assert measured[nodeid].seconds > 0
    assert BROKEN not in measured  # a failure measures nothing


def _quarantine_file(path: Path, expires: date) -> Path:
    path.write_text(
        "[[quarantine]]\n"
        f'nodeid = "{SUITE}::TestBroken"\n'
        'reason = "the golden is wrong; fix in review"\n'
        'owner = "device-team"\n'
        f"expires = {expires.isoformat()}\n"
    )
    return path


def test_quarantining_the_broken_test_runs_it_and_turns_the_run_green(tmp_path: Path) -> None:
    entries = _quarantine_file(tmp_path / "q.toml", date.today() + timedelta(days=30))
    path = tmp_path / "report.jsonl"
    run = _simpler(
        "run", "--platform", "a5sim", "--device", "0", "--report", str(path),
        "--quarantine", str(entries), "--", SUITE,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    broken = [r for r in report.read(path) if r["type"] == "test" and r["nodeid"] == BROKEN]
    assert [(r["outcome"], r.get("quarantined")) for r in broken] == [("failed", True)]
    quarantined_block = run.stdout[run.stdout.index("Quarantined") :]
    assert BROKEN in quarantined_block and "the golden is wrong" in quarantined_block
    assert run.stdout.rstrip().splitlines()[-1].endswith("-> exit 0")


def test_an_expired_entry_gates_again(tmp_path: Path) -> None:
    entries = _quarantine_file(tmp_path / "q.toml", date.today() - timedelta(days=1))
    run = _simpler(
        "run", "--platform", "a5sim", "--device", "1", "--report", str(tmp_path / "r.jsonl"),
        "--quarantine", str(entries), "--", SUITE,
    )  # fmt: skip
    assert run.returncode == 1, run.stdout[-3000:]
    assert "gates again" in run.stdout
    assert run.stdout.rstrip().splitlines()[-1].endswith("-> exit 1")


def test_the_page_of_the_real_history_shows_every_test_and_its_strip(
    history: Path, tmp_path: Path
) -> None:
    browser = headless_chromium.browser_or_skip(tmp_path / "chromium-profile")
    page = tmp_path / "history.html"
    written = _simpler("history", "html", str(page), "--db", str(history))
    assert written.returncode == 0, written.stderr
    seen = read_rows(browser.dump_dom(page))
    pairs = zip(seen.rows, seen.strips, strict=True)
    rows = {row["nodeid"]: (row["state"], strip) for row, strip in pairs}
    assert set(rows) == {*STABLE, BROKEN, FLAKY, VICTIM}
    order = _run_numbers_oldest_first(history)
    state, strip = rows[VICTIM]
    assert state == "stable"
    assert "".join(letter for letter, _ in strip) == "".join(
        "D" if n in STUCK_CARD_RUNS else "." for n in order
    )
    assert rows[BROKEN][0] == "broken" and rows[FLAKY][0] == "flaky"


def test_quarantine_advice_suggests_the_flaky_test_and_releases_a_green_one(
    history: Path, tmp_path: Path
) -> None:
    entries = tmp_path / "simpler-quarantine.toml"
    suggested = _simpler(
        "history", "quarantine", "--suggest", "--write", "--owner", "device-team",
        "--db", str(history), "--quarantine", str(entries),
    )  # fmt: skip
    assert suggested.returncode == 0, suggested.stderr
    text = entries.read_text()
    # Flaky by its own fault: suggested. Broken, and the device's victim: never.
    assert FLAKY in text and BROKEN not in text and VICTIM not in text
    entries.write_text(text + text.replace(FLAKY, STABLE[0]))
    released = _simpler(
        "history", "quarantine", "--release", "--write", "--passes", str(RUNS),
        "--db", str(history), "--quarantine", str(entries),
    )  # fmt: skip
    assert released.returncode == 0, released.stderr
    assert f"release {STABLE[0]}" in released.stdout and "host-0, host-1" in released.stdout
    remaining = entries.read_text()
    assert STABLE[0] not in remaining and FLAKY in remaining


def test_a_run_with_history_imports_itself_and_a_bad_database_stops_it_before_any_test(
    tmp_path: Path,
) -> None:
    db = tmp_path / "history.db"
    run = _simpler(
        "run", "--platform", "a5sim", "--device", "0", "--report", str(tmp_path / "r.jsonl"),
        "--run-id", "with-history", "--history", str(db), "--", SUITE,
    )  # fmt: skip
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-2000:]
    assert "simpler: run imported into the history" in run.stderr
    assert run.stdout.rstrip().splitlines()[-1].endswith("-> exit 1")  # still the last line
    with closing(sqlite3.connect(db)) as conn:  # its own with commits, never closes
        assert conn.execute("SELECT run_id, complete FROM runs").fetchall() == [("with-history", 1)]
        verdict = conn.execute(
            "SELECT outcome, cause FROM verdicts WHERE nodeid = ?", (BROKEN,)
        ).fetchone()
    assert verdict == ("failed", "test")

    notes = tmp_path / "notes.db"
    notes.write_text("not a database\n" * 100)
    report = tmp_path / "never.jsonl"
    refused = _simpler(
        "run", "--platform", "a5sim", "--device", "0", "--report", str(report),
        "--history", str(notes), "--", SUITE,
    )  # fmt: skip
    assert refused.returncode == 3
    assert len(refused.stderr.strip().splitlines()) == 1 and str(notes) in refused.stderr
    assert not report.exists() or not [r for r in report.read(report) if r["type"] == "test"]


def _answers(db: Path | str, out: Path) -> dict[str, str]:
    """What every reader says of a history, as a user reads it."""
    said = {}
    entries = out / "release.toml"  # a stable test quarantined: --release lets it go
    entries.write_text(
        f'[[quarantine]]\nnodeid = "{STABLE[0]}"\nreason = "r"\nowner = "o"\n'
        f"expires = {(date.today() + timedelta(days=30)).isoformat()}\n"
    )
    for name, args in {
        "markdown": ("flaky", "--format", "markdown"),
        "release": ("quarantine", "--release", "--passes", str(RUNS), "--quarantine", str(entries)),
        "flaky": ("flaky", "--format", "json"),
        "table": ("flaky",),
        "show-victim": ("show", VICTIM),
        "show-flaky": ("show", FLAKY),
        "suggest": (
            "quarantine",
            "--suggest",
            "--owner",
            "device-team",
            "--quarantine",
            str(out / "none.toml"),
        ),
        "durations": ("durations", "--out", str(out / "durations.json")),
    }.items():
        answered = _simpler("history", *args, "--db", str(db))
        assert answered.returncode == 0, answered.stderr
        said[name] = answered.stdout.replace(str(out), "OUT")
    said["durations.json"] = (out / "durations.json").read_text()
    said["html"] = _page(db, out / "history.html")
    assert f"release {STABLE[0]}" in said["release"]  # an answer worth comparing
    return said


def _page(db: Path | str, out: Path) -> str:
    """The history page, less what names the store and when the page was made."""
    written = _simpler("history", "html", str(out), "--db", str(db))
    assert written.returncode == 0, written.stderr
    page = out.read_text().replace(html.escape(store_title(str(db))), "STORE")
    return re.sub(r"generated \d{4}-\d\d-\d\d \d\d:\d\d UTC", "generated WHEN", page)


def test_a_server_holds_the_same_history_as_the_file(
    reports: list[Path], history: Path, postgres_url: str, tmp_path: Path
) -> None:
    shuffled = list(reports)
    random.Random(34).shuffle(shuffled)
    _import(postgres_url, shuffled)
    _import(postgres_url, list(reversed(reports)))  # again, in another order: nothing changes
    assert every_row(postgres_url) == every_row(history)
    assert len(every_row(postgres_url)["runs"]) == RUNS
    (tmp_path / "file").mkdir()
    (tmp_path / "server").mkdir()
    from_file = _answers(history, tmp_path / "file")
    from_server = _answers(postgres_url, tmp_path / "server")
    for name, said in from_file.items():
        assert from_server[name] == said, name


def test_a_run_with_a_server_history_imports_itself_and_a_wrong_password_stops_it_first(
    postgres_server: PostgresServer, postgres_url: str, tmp_path: Path
) -> None:
    run = _simpler(
        "run", "--platform", "a5sim", "--device", "0", "--report", str(tmp_path / "r.jsonl"),
        "--run-id", "on-a-server", "--history", postgres_url, "--", SUITE,
    )  # fmt: skip
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-2000:]
    assert "simpler: run imported into the history postgresql://simpler:***@" in run.stderr
    assert PASSWORD not in run.stdout + run.stderr
    assert every_row(postgres_url)["runs"][0][0] == "on-a-server"

    database = postgres_url.rpartition("/")[2]
    report = tmp_path / "never.jsonl"
    refused = _simpler(
        "run", "--platform", "a5sim", "--device", "0", "--report", str(report), "--", SUITE,
        env={"SIMPLER_HISTORY": postgres_server.url(database, password="pw-WRONG-17")},
    )  # fmt: skip
    assert refused.returncode == 3
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert f"{postgres_server.port}/{database}" in refused.stderr
    assert "pw-WRONG-17" not in refused.stdout + refused.stderr
    assert not report.exists() or not [r for r in report.read(report) if r["type"] == "test"]


def _shards(report_file: Path, out: Path) -> list[Path]:
    """The run's report as two CI jobs would send it: its first phase, then the rest."""
    lines = report_file.read_text().splitlines(keepends=True)
    records = [json.loads(line) for line in lines]
    cut = 1 + next(n for n, r in enumerate(records) if r["type"] == "phase" and r["event"] == "end")
    first, rest = out / f"{report_file.stem}.first.jsonl", out / f"{report_file.stem}.rest.jsonl"
    first.write_text("".join(lines[:cut]))
    rest.write_text("".join(lines[cut:]))
    return [first, rest]


def test_sixteen_importers_at_once_store_every_run_once(
    reports: list[Path], postgres_url: str, tmp_path: Path
) -> None:
    """16 CI jobs import into one server at the same moment: whole runs, shards of one run,
    and the same files twice. The server must hold what importing them one at a time gives.

    "The same moment" is made so, not hoped for: the test holds the table of suites, which
    every import writes last, until each importer waits there (or for the run another importer
    holds), with its run's other rows written; then it lets them all go. Their runs share a
    suite, so all of them add it at once.
    """
    # Runs 2 and 8 had a retry: each of their shards holds tests.
    parts = [reports[0], *_shards(reports[1], tmp_path), *reports[2:7]]
    parts += [*_shards(reports[7], tmp_path), *reports[8:]]  # 12 parts of the ten runs
    again = [parts[0], parts[2], parts[8], parts[9]]  # 4 more: two runs, two shards
    jobs = [*parts, *again]
    assert len(jobs) == 16
    one_at_a_time = tmp_path / "serial.db"
    _import(one_at_a_time, parts)

    from simpler.history.store import open_store

    open_store(postgres_url).close()  # the tables, so that no importer waits to make them
    with held_table(postgres_url, "suite_tests"):
        importers = [_start(_import_args(postgres_url, path)) for path in jobs]
        wait_for_waiters(postgres_url, importers)
    for importer in importers:
        _, stderr = importer.communicate(timeout=300)
        assert importer.returncode == 0, stderr
    assert every_row(postgres_url) == every_row(one_at_a_time)
    assert _flaky(postgres_url) == _flaky(one_at_a_time)


def _start(args: tuple[str, ...]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        python_m("simpler", *args), cwd=ROOT, env=simpler_env(), text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
