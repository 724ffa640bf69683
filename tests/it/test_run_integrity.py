"""No verdict lost off the happy path: split sessions, quarantine under a two-card test,
a second fault in the retry, test output fenced under GitHub Actions."""

from __future__ import annotations

import re
from typing import Any

from processes import sim_faults
from trigger_victims import HANG

SCENARIOS = "tests/it/scenarios"
HANG_SUITE, TRIGGER, VICTIMS = HANG.path, HANG.trigger, HANG.victims
QUARANTINE_SUITE = f"{SCENARIOS}/scenario_quarantine_multi.py"
COMMANDS_SUITE = f"{SCENARIOS}/scenario_workflow_commands.py"
# The trigger hangs on every attempt and its card cannot be reset: a red L2 whose victims
# are poison-skipped and recovered by the retry, and whose trigger stays failed.
RED_L2 = sim_faults("hang@TestTrigger", "force_reset_fail")


def _verdict_line(stdout: str) -> str:
    return stdout.rstrip().splitlines()[-1]


def test_split_sessions_give_the_verdict_of_one_run(simpler_run: Any, tmp_path: Any) -> None:
    whole = simpler_run.suite(HANG_SUITE, *RED_L2, device="0")
    shared = str(tmp_path / "shared.jsonl")
    sessions = [
        simpler_run.suite(HANG_SUITE, *RED_L2, device="0", options=("--report", shared, *phase))
        for phase in (("--phases", "l2"), ("--phases", "resource"), ("--phases", "retry"))
    ]
    report = simpler_run("report", "--file", shared)
    assert whole.returncode == 1
    assert report.returncode == whole.returncode, report.stdout
    assert sessions[0].returncode == 1  # the red L2 session is red on its own
    assert _verdict_line(report.stdout) == _verdict_line(whole.stdout)
    assert f"{TRIGGER}: failed" in report.stdout
    runs = {r["run"] for r in _records(shared)}
    assert len(runs) == 1, "the later sessions continue the run the l2 session started"
    recovered = {r["nodeid"] for r in _records(shared) if r.get("outcome") == "recovered"}
    assert recovered == set(VICTIMS)


def test_new_run_and_run_id_name_the_run(simpler_run: Any, tmp_path: Any) -> None:
    shared = str(tmp_path / "named.jsonl")
    named = ("--report", shared, "--run-id", "ci-42", "--phases", "l2")
    simpler_run.suite(HANG_SUITE, device="0", options=named)
    fresh_options = ("--report", shared, "--new-run", "--phases", "retry")
    fresh = simpler_run.suite("-q", device="0", options=fresh_options)
    bad = simpler_run.suite(HANG_SUITE, device="0", options=("--run-id", "two words"))
    assert fresh.returncode == 0
    runs = list(dict.fromkeys(r["run"] for r in _records(shared)))
    assert runs[0] == "ci-42" and len(runs) == 2
    assert bad.returncode == 2 and "is not a run id" in bad.stderr and "Traceback" not in bad.stderr


def test_a_quarantined_card_fails_the_two_card_test_with_a_reason(simpler_run: Any) -> None:
    run = simpler_run.suite(
        QUARANTINE_SUITE, *sim_faults("hang@test_pooled_launch", "force_reset_fail")
    )
    assert run.returncode == 1
    assert "Traceback" not in run.stdout + run.stderr
    child = run.records("child", nodeid=f"{QUARANTINE_SUITE}::test_needs_both_cards")[-1]
    assert child["not_run"].startswith("not run: only 1 device(s) left that are not retired")
    assert "not run: only 1 device(s) left that are not retired (retired: " in run.stdout
    assert run.records("phase", phase="retry", event="end")
    assert _verdict_line(run.stdout).startswith("simpler: ")


def test_a_second_fault_in_the_retry_costs_only_the_test_that_faulted(simpler_run: Any) -> None:
    run = simpler_run.suite(
        HANG_SUITE,
        *sim_faults("hang@TestTrigger#1", "hang@TestVictim2#2", "force_reset_fail"),
        device="0",
    )
    retry = run.outcomes("retry")
    assert retry[VICTIMS[1]] == "failed"
    assert all(retry[v] == "recovered" for v in VICTIMS if v != VICTIMS[1]), retry
    assert retry[TRIGGER] == "flaky"
    assert run.returncode == 1
    assert "no usable device" not in run.stdout


# What scenario_workflow_commands.py prints: each line reaches our log twice, streamed live by
# the L2 pytest and repeated in the summary's failure output.
FORGED_COMMANDS = ("::error title=forged::from-a-test", "::add-mask::from-a-test-secret")


def test_l2_output_is_fenced_under_github_actions(simpler_run: Any) -> None:
    run = simpler_run.suite(
        COMMANDS_SUITE,
        device="0",
        options=("--phases", "l2,report"),
        env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": ""},
    )
    assert run.returncode == 1
    lines = run.stdout.splitlines()
    for command in FORGED_COMMANDS:
        assert [line.strip() for line in lines].count(command) == 2, run.stdout

    open_token: str | None = None
    for line in lines:
        start = re.fullmatch(r"::stop-commands::(\S+)", line)
        if start:
            open_token = start[1]
        elif open_token and line == f"::{open_token}::":
            open_token = None
        elif "from-a-test" in line:
            assert open_token is not None, f"unfenced: {line}"
    assert open_token is None


def _records(path: str) -> list[dict[str, Any]]:
    from simpler import report

    return report.read(path)
