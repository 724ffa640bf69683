"""No verdict lost off the happy path: split sessions, quarantine under a two-card test,
a second fault in the retry, test output fenced under GitHub Actions."""

from __future__ import annotations

import re
from typing import Any

SCENARIOS = "tests/it/scenarios"
HANG_SUITE = f"{SCENARIOS}/scenario_hang_victims.py"
TRIGGER = f"{HANG_SUITE}::TestTrigger::test_launch"
VICTIMS = [
    f"{HANG_SUITE}::TestVictim{i}::test_{k}"
    for i, k in [(1, "noop"), (2, "noop"), (3, "add"), (4, "noop"), (5, "add")]
]
QUARANTINE_SUITE = f"{SCENARIOS}/scenario_quarantine_multi.py"
COMMANDS_SUITE = f"{SCENARIOS}/scenario_workflow_commands.py"
# The trigger hangs on every attempt and its card cannot be reset: a red L2 whose victims
# are poison-skipped and recovered by the retry, and whose trigger stays failed.
RED_L2 = ("--simpler-sim-fault", "hang@TestTrigger", "--simpler-sim-fault", "force_reset_fail")


def _run(*options: str, device: str = "0") -> tuple[str, ...]:
    return ("run", "--platform", "a5sim", "--device", device, *options)


def _verdict_line(stdout: str) -> str:
    return stdout.rstrip().splitlines()[-1]


def test_split_sessions_give_the_verdict_of_one_run(simpler_run: Any, tmp_path: Any) -> None:
    whole = simpler_run(*_run("--", HANG_SUITE, *RED_L2))
    shared = str(tmp_path / "shared.jsonl")
    sessions = [
        simpler_run(*_run("--report", shared, "--phases", phase, "--", HANG_SUITE, *RED_L2))
        for phase in ("l2", "resource", "retry")
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
    simpler_run(*_run("--report", shared, "--run-id", "ci-42", "--phases", "l2", "--", HANG_SUITE))
    fresh = simpler_run(*_run("--report", shared, "--new-run", "--phases", "retry", "--", "-q"))
    bad = simpler_run(*_run("--run-id", "two words", "--", HANG_SUITE))
    assert fresh.returncode == 0
    runs = list(dict.fromkeys(r["run"] for r in _records(shared)))
    assert runs[0] == "ci-42" and len(runs) == 2
    assert bad.returncode == 2 and "is not a run id" in bad.stderr and "Traceback" not in bad.stderr


def test_a_quarantined_card_fails_the_two_card_test_with_a_reason(simpler_run: Any) -> None:
    run = simpler_run(
        *_run(
            "--",
            QUARANTINE_SUITE,
            "--simpler-sim-fault",
            "hang@test_pooled_launch",
            "--simpler-sim-fault",
            "force_reset_fail",
            device="0-1",
        )
    )
    assert run.returncode == 1
    assert "Traceback" not in run.stdout + run.stderr
    child = run.records("child", nodeid=f"{QUARANTINE_SUITE}::test_needs_both_cards")[-1]
    assert child["not_run"].startswith("not run: only 1 device(s) left that are not retired")
    assert "not run: only 1 device(s) left that are not retired (retired: " in run.stdout
    assert run.records("phase", phase="retry", event="end")
    assert _verdict_line(run.stdout).startswith("simpler: ")


def test_a_second_fault_in_the_retry_costs_only_the_test_that_faulted(simpler_run: Any) -> None:
    run = simpler_run(
        *_run(
            "--",
            HANG_SUITE,
            "--simpler-sim-fault",
            "hang@TestTrigger#1",
            "--simpler-sim-fault",
            "hang@TestVictim2#2",
            "--simpler-sim-fault",
            "force_reset_fail",
        )
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
    run = simpler_run(
        *_run("--phases", "l2,report", "--", COMMANDS_SUITE),
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
