"""Nothing looks green that did not run, and the verdict line never disagrees with the process:
through ``simpler run`` itself, the way a user and CI meet it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SUITE = "tests/it/scenarios/scenario_nothing_ran.py"
RUN = ("run", "--platform", "a5sim", "--device", "0")


def _last(text: str) -> str:
    return text.rstrip("\n").splitlines()[-1]


def test_an_all_skipped_suite_says_nothing_ran_and_fails_only_when_asked(
    simpler_run: Any,
) -> None:
    run = simpler_run(*RUN, "--", SUITE, env={"NOTHING_RAN_MODE": "skip"})
    assert run.returncode == 0, run.stderr
    assert _last(run.stdout) == "simpler: nothing ran: 9 of 9 skipped -> exit 0"
    assert run.stdout.rstrip().splitlines()[-4:-1] == [
        "Skipped: 9 of 9 test(s), by reason:",
        "     6  --platform required",
        "     3  no second card",
    ]
    strict = simpler_run(
        *RUN, "--fail-if-nothing-ran", "--", SUITE, env={"NOTHING_RAN_MODE": "skip"}
    )
    assert strict.returncode == 1
    assert _last(strict.stdout) == (
        "simpler: nothing ran: 9 of 9 skipped -> exit 1 (--fail-if-nothing-ran)"
    )
    again = simpler_run("report", "--file", str(strict.report), "--fail-if-nothing-ran")
    assert again.returncode == 1 and _last(again.stdout) == _last(strict.stdout)


def test_under_github_actions_nothing_ran_is_a_warning_annotation(
    simpler_run: Any, tmp_path: Path
) -> None:
    env = {"NOTHING_RAN_MODE": "skip", "GITHUB_ACTIONS": "true"}
    env["GITHUB_STEP_SUMMARY"] = str(tmp_path / "step.md")
    run = simpler_run(*RUN, "--", SUITE, env=env)
    assert run.returncode == 0
    warnings = [line for line in run.stdout.splitlines() if line.startswith("::warning")]
    assert warnings == [
        "::warning title=Nothing ran::9 of 9 test(s) skipped; most: 6 x --platform required"
    ]
    assert (tmp_path / "step.md").read_text().startswith("## :warning: simpler: nothing ran")


def test_a_usage_error_is_the_exit_code_of_the_verdict_line(simpler_run: Any) -> None:
    run = simpler_run(*RUN, "--", "tests/missing")
    assert run.returncode == 2
    assert _last(run.stdout).endswith("-> exit 2 (usage error in phase l2)")


def test_sigint_mid_run_the_verdict_line_says_130_and_counts_what_got_no_verdict(
    simpler_run: Any, tmp_path: Path
) -> None:
    mark = tmp_path / "blocked"
    run, _ = simpler_run.interrupt(
        *RUN,
        "--",
        SUITE,
        when=lambda _: mark.exists(),
        env={"NOTHING_RAN_MODE": "block", "NOTHING_RAN_MARK": str(mark)},
        wait_s=120,
    )
    assert mark.exists(), "the blocking test never started"
    assert run.returncode == 130, run.stderr
    out = run.stdout
    last = _last(out)
    assert last.startswith("simpler: 1 passed, "), out[-3000:]
    assert last.endswith(" 8 not run -> exit 130 (interrupted by SIGINT)")
    assert "*** 8 planned test(s) not run (l2: interrupted by SIGINT) ***" in out


def test_an_empty_report_file_says_it_holds_no_run_and_where_runs_go(
    simpler_run: Any, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    alone = simpler_run("report", "--file", str(empty))
    assert alone.returncode == 5
    assert _last(alone.stdout) == f"simpler: nothing ran: no run in {empty} -> exit 5"
    assert alone.stderr.strip() == (
        f"simpler report: {empty} holds no run (no record in it): a run writes its records "
        "where simpler run --report names, else $SIMPLER_REPORT, else .simpler/report.jsonl"
    )
    ran = simpler_run(*RUN, "--", SUITE, env={"NOTHING_RAN_MODE": "skip"})
    beside = simpler_run("report", "--file", str(empty), "--file", str(ran.report))
    assert beside.returncode == 0 and _last(beside.stdout) == _last(ran.stdout)
    assert f"{empty} holds no run" in beside.stderr
