"""The tests the history saw fail or flake in its last N runs, counted from their verdicts;
older runs and green verdicts select nothing."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

from history_rows import HOUR, T0, Try, add_run, add_test, open_db

from simpler.impact.recent import recent_trouble


def test_failures_and_flakes_of_the_last_runs_only(tmp_path: Path) -> None:
    with closing(open_db(tmp_path)) as conn:
        outcomes = [  # oldest first: run 0 falls outside the last 3
            {"t::old_failure": "failed", "t::ok": "passed"},
            {"t::fails": "failed", "t::ok": "passed", "t::skipped": "skipped"},
            {"t::fails": "error", "t::flaky": "flaky"},
            {"t::fails": "passed", "t::flaky": "passed", "t::never_rerun": "poison_skipped"},
        ]
        for index, tests in enumerate(outcomes):
            add_run(conn, f"r{index}", started=T0 + index * HOUR)
            for nodeid, outcome in tests.items():
                add_test(conn, f"r{index}", nodeid, Try(outcome))
        assert recent_trouble(conn, 3) == {
            "t::fails": ["failed in 2 of the last 3 runs"],
            "t::flaky": ["flaky in 1 of the last 3 runs"],
            "t::never_rerun": ["failed in 1 of the last 3 runs"],
        }


def test_the_decision_runs_unskippable_and_recently_failed_tests_on_any_change(
    tmp_path: Path,
) -> None:
    import subprocess

    from simpler.history.store import open_store
    from simpler.impact.affected import decide
    from simpler.impact.map import ImpactMap
    from simpler.impact.select import Rules
    from simpler.impact.store import Environment, save_map

    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                              check=True)  # fmt: skip
        return done.stdout.strip()

    git("init", "-q", "-b", "main")
    (repo / "README.md").write_text("x\n")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    history = str(tmp_path / "h.db")
    with closing(open_store(history)) as conn:
        save_map(conn, git("rev-parse", "HEAD"), Environment.here(),
                 ImpactMap(tests={"t::a": set(), "t::b": set(), "t::c": set()}))  # fmt: skip
        add_run(conn, "r1", started=T0)
        add_test(conn, "r1", "t::b", Try("failed"))
    (repo / "README.md").write_text("y\n")  # a non-code change: nothing else selects
    rules = Rules(non_code=("*.md",), recent_runs=5)
    affected = decide(repo, "HEAD", history, ["t::a", "t::b", "t::c"], rules, 10, {"t::c"})
    assert affected.decision.selected == {
        "t::b": ["failed in 1 of the last 5 runs"],
        "t::c": ["unskippable"],
    }
    assert affected.decision.left_out == ["t::a"]


def test_each_tests_measured_time_is_its_passing_attempts_mean_over_the_last_runs(
    tmp_path: Path,
) -> None:
    from simpler.impact.measured import measured_seconds

    with closing(open_db(tmp_path)) as conn:
        add_run(conn, "old", started=T0)
        add_test(conn, "old", "t::a", Try("passed", duration_s=100.0))
        for index, seconds in enumerate((2.0, 4.0)):
            add_run(conn, f"r{index}", started=T0 + (index + 1) * HOUR)
            add_test(conn, f"r{index}", "t::a", Try("passed", duration_s=seconds))
            add_test(conn, f"r{index}", "t::b", Try("failed", duration_s=50.0), Try("passed"))
        add_test(conn, "r1", "t::only_failed", Try("failed", duration_s=9.0))
        assert measured_seconds(conn, 2) == {"t::a": 3.0, "t::b": 1.0}


def test_the_headline_says_the_selected_share_of_the_measured_time() -> None:
    from simpler.impact.affected import Affected
    from simpler.impact.render import headline
    from simpler.impact.select import Decision

    decision = Decision(selected={"t::a": ["new test"]}, left_out=["t::b", "t::c", "t::new"])
    seconds = {"t::a": 1.0, "t::b": 3.0, "t::c": 16.0, "t::gone": 80.0}
    affected = Affected("main", decision, "0" * 40, 2, seconds)
    assert affected.time_share() == 0.05
    assert headline(affected) == (
        "affected since main (map of 0000000, 2 commit(s) back): 1 of 4 tests selected, "
        "5% of the measured test time"
    )
    assert "measured" not in headline(Affected("main", decision, "0" * 40, 2))
