"""A quarantine that still runs the test, through ``simpler run`` as a user meets it: the
quarantined tests run and fail as before, the run is green and names them; an expired entry
gates again; a file with a syntax error stops the run before any test."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from typing import Any

SUITE = "tests/it/scenarios/scenario_quarantine_tests.py"
BROKEN = f"{SUITE}::TestBroken::test_fails"
TWO_CARDS = f"{SUITE}::test_two_cards_fail"
RUN = ("run", "--platform", "a5sim", "--device", "0-1")


def _entry(nodeid: str, expires: date) -> str:
    return (
        f'[[quarantine]]\nnodeid = "{nodeid}"\nreason = "known broken"\n'
        f'owner = "alice"\nexpires = {expires}\n\n'
    )


def _last(text: str) -> str:
    return text.rstrip("\n").splitlines()[-1]


def test_quarantined_tests_still_run_and_do_not_change_the_exit_code(
    simpler_run: Any, tmp_path: Path
) -> None:
    soon = date.today() + timedelta(days=30)
    file = tmp_path / "simpler-quarantine.toml"
    renamed = f"{SUITE}::test_renamed_long_ago"
    file.write_text(
        _entry(f"{SUITE}::TestBroken", soon) + _entry(TWO_CARDS, soon) + _entry(renamed, soon)
    )
    run = simpler_run(*RUN, "--quarantine", str(file), "--", SUITE)
    assert run.returncode == 0, run.stdout + run.stderr
    # It ran, in an xdist worker and a Resource child, and failed as pytest says it did.
    for nodeid, phase in ((BROKEN, "l2"), (TWO_CARDS, "resource")):
        (record,) = run.records("test", nodeid=nodeid)
        assert (record["phase"], record["outcome"], record["quarantined"]) == (
            phase,
            "failed",
            True,
        )
    (passing,) = run.records("test", nodeid=f"{SUITE}::test_passes")
    assert passing["outcome"] == "passed" and "quarantined" not in passing
    (child,) = run.records("child", nodeid=TWO_CARDS)
    assert child["quarantined"] is True and child["returncode"] == 1
    assert "Quarantined (2): failures here do not change the exit code" in run.stdout
    assert f"  {BROKEN}: failed (reason: known broken; owner alice; expires {soon})" in run.stdout
    assert _last(run.stdout) == (
        "simpler: 1 passed, 0 recovered, 0 flaky, 0 failed, 2 quarantined -> exit 0"
    )
    warning = f"simpler: quarantine entry {renamed} ({file}:13) matches no collected test"
    assert run.stderr.count(warning) == 1
    # A later `simpler report` judges by the records; the file only says why.
    bare = simpler_run("report", "--file", str(run.report))
    assert bare.returncode == 0 and _last(bare.stdout) == _last(run.stdout)
    assert f"  {BROKEN}: failed (its entry is not in a quarantine file this report read)" in (
        bare.stdout
    )
    told = simpler_run("report", "--file", str(run.report), "--quarantine", str(file))
    assert told.returncode == 0 and f"  {BROKEN}: failed (reason: known broken;" in told.stdout


def test_an_expired_entry_gates_again(simpler_run: Any, tmp_path: Path) -> None:
    past = date.today() - timedelta(days=2)
    file = tmp_path / "q.toml"
    file.write_text(_entry(f"{SUITE}::TestBroken", past))
    run = simpler_run(*RUN, "--quarantine", str(file), "--", SUITE, "-k", "not two_cards")
    assert run.returncode == 1, run.stdout + run.stderr
    (record,) = run.records("test", nodeid=BROKEN)
    assert record["quarantine_expired"] == past.isoformat() and "quarantined" not in record
    assert f"quarantine expired {past}: {BROKEN} gates again (failed)" in run.stdout
    assert f"expired on {past}: it gates again" in run.stderr  # named before the run, too
    assert _last(run.stdout) == "simpler: 1 passed, 0 recovered, 0 flaky, 1 failed -> exit 1"


def test_a_syntax_error_stops_the_run_before_any_test(simpler_run: Any, tmp_path: Path) -> None:
    file = tmp_path / "q.toml"
    file.write_text(_entry(f"{SUITE}::TestBroken", date.today()) + "reason = known broken\n")
    run = simpler_run(*RUN, "--quarantine", str(file), "--", SUITE)
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        f"error: simpler run: quarantine file {file}:7:10: invalid value"
    ]
    assert run.records("test") == [] and run.records("phase") == []
