"""GitHub Actions markup: fenced child output, capped annotations, a step summary under 1 MiB."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_records import child, phase_span, result

from simpler.ci import gha
from simpler.reporting.records import ChildRecord
from simpler.reporting.summary import summarize
from simpler.reporting.verdicts import Failure
from simpler.scheduler.jobs import JobResult

MiB = 1024 * 1024


# --- environment ---------------------------------------------------------------------------


def test_only_github_actions_true_counts() -> None:
    assert gha.is_github_actions({"GITHUB_ACTIONS": "true"})
    assert not gha.is_github_actions({"GITHUB_ACTIONS": "false"})
    assert not gha.is_github_actions({})


# --- the stop-commands fence ---------------------------------------------------------------


def test_child_output_that_looks_like_a_command_sits_inside_the_fence() -> None:
    token = gha.new_stop_token()
    output = "collected 1 item\n::error::pwned\n::endgroup::\nFAILED"
    lines = gha.fenced(output, token).splitlines()
    assert lines[0] == f"::stop-commands::{token}"
    assert lines[-1] == f"::{token}::"
    assert lines.index("::error::pwned") in range(1, len(lines) - 1)
    assert lines.index("::endgroup::") in range(1, len(lines) - 1)


def test_every_token_is_fresh_and_unguessable() -> None:
    tokens = {gha.new_stop_token() for _ in range(100)}
    assert len(tokens) == 100
    assert all(len(token) >= 32 for token in tokens)


def test_output_that_already_holds_the_end_marker_is_refused() -> None:
    token = gha.new_stop_token()
    with pytest.raises(ValueError, match="end marker"):
        gha.fenced(f"::{token}::\n::error::pwned", token)
    with pytest.raises(ValueError, match="token"):
        gha.fenced("text", "")


def test_a_child_group_wraps_fenced_output_and_names_how_it_ended() -> None:
    token = "t" * 32
    text = gha.child_group(child(returncode=1), "::warning::inside\n", token)
    assert text.splitlines() == [
        "::group::two_cards [FAIL rc=1 devices=4,5]",
        f"::stop-commands::{token}",
        "::warning::inside",
        f"::{token}::",
        "::endgroup::",
    ]


def test_a_group_takes_a_job_result_too() -> None:
    passed = JobResult("solo", 0, None, [3], 0.2)
    killed = JobResult("seg", None, "SIGSEGV", [0, 1], 0.2)
    hung = JobResult("hung", None, "SIGKILL", [2], 9.0, timed_out=True)
    assert gha.child_group(passed, "", "t" * 32).startswith("::group::solo [PASS rc=0 devices=3]")
    assert gha.child_status(killed) == "FAIL signal=SIGSEGV devices=0,1"
    assert gha.child_status(hung) == "FAIL timeout signal=SIGKILL devices=2"
    assert gha.group_end() == "::endgroup::"


# --- escaping ------------------------------------------------------------------------------


def test_data_and_properties_are_escaped() -> None:
    assert gha.escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert gha.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    command = gha.workflow_command("error", "line 1\nline 2", {"title": "x: y, z"})
    assert command == "::error title=x%3A y%2C z::line 1%0Aline 2"


def test_a_label_cannot_break_its_group_line() -> None:
    assert gha.group_start("evil\n::error::x", "PASS") == "::group::evil%0A::error::x [PASS]"


# --- annotations ---------------------------------------------------------------------------


def test_a_failed_child_gets_its_resource_phase_annotation() -> None:
    failures = summarize(phase_span("resource", child(returncode=1, nodeid=None))).failures
    assert gha.error_annotations(failures) == [
        "::error title=Resource phase failed::two_cards rc=1 devices=4,5"
    ]


def test_a_signal_or_timeout_is_named_in_the_annotation() -> None:
    hung = child(returncode=None, signal="SIGKILL", timed_out=True, duration_s=30.0, nodeid=None)
    (line,) = gha.error_annotations(summarize(phase_span("resource", hung)).failures)
    assert line == (
        "::error title=Resource phase failed::two_cards signal=SIGKILL devices=4,5 "
        "(timed out after 30.0 s, stopped with SIGKILL)"
    )


def test_an_unrecovered_test_failure_gets_a_test_annotation() -> None:
    failed = result("tests/st/test_a.py::test_x", "failed", rc=507046, where="aclrtSync")
    (line,) = gha.error_annotations(summarize(phase_span("l2", failed)).failures)
    assert (
        line
        == "::error title=Test failed::tests/st/test_a.py::test_x: failed, rc=507046 at aclrtSync"
    )


def test_annotations_stop_at_the_cap_and_one_notice_counts_the_rest() -> None:
    records = phase_span("l2", *[result(f"t.py::test_{n}", "failed") for n in range(25)])
    lines = gha.error_annotations(summarize(records).failures)
    assert len(lines) == 11
    assert all(line.startswith("::error title=Test failed::") for line in lines[:10])
    assert lines[10].startswith("::notice title=More failures::15 more failure(s)")
    assert sum(line.startswith("::notice") for line in lines) == 1


def test_the_cap_is_configurable_and_no_notice_without_a_rest() -> None:
    failures = [Failure("child", child=child(label=f"c{n}", returncode=1)) for n in range(3)]
    assert len(gha.error_annotations(failures, cap=3)) == 3
    assert gha.error_annotations(failures, cap=1)[-1].startswith("::notice title=More failures::2")


# --- step summary markdown -----------------------------------------------------------------


def test_the_step_summary_has_the_verdict_a_failure_table_and_the_retried_lists() -> None:
    records = [
        *phase_span(
            "l2",
            result("t.py::test_bad", "failed", message="assert 1 | 2\nsecond line"),
            result("t.py::test_flaky", "failed"),
            result("t.py::test_victim", "poison_skipped"),
        ),
        *phase_span(
            "resource",
            child(returncode=None, signal="SIGSEGV", nodeid=None, log="logs/a|b.log"),
            child(label="fine", nodeid=None),
        ),
        *phase_span(
            "retry",
            result("t.py::test_flaky", "flaky", phase="retry", attempt=2),
            result("t.py::test_victim", "recovered", phase="retry", attempt=2),
        ),
    ]
    summary = summarize(records)
    children = [r for r in records if isinstance(r, ChildRecord)]
    markdown = gha.step_summary_markdown(summary, children)
    assert markdown.startswith("## :x: simpler: ")
    assert "-&gt; exit 1" in markdown.splitlines()[0]
    assert "| Label/Test | Result | Devices | Duration | Log |" in markdown
    assert "| `t.py::test_bad` | failed: assert 1 \\| 2 | 0 | 0.5 s |  |" in markdown
    assert "| two_cards | killed by SIGSEGV | 4,5 | 1.0 s | `logs/a\\|b.log` |" in markdown
    assert "**Recovered** (re-run in a fresh process): 1\n\n- `t.py::test_victim` (attempt 2)" in (
        markdown
    )
    assert "- `t.py::test_flaky` passed on attempt 2" in markdown
    assert "<summary>Resource children: 2 (1 failed)</summary>" in markdown
    assert "| fine | passed | 4,5 | 1.0 s |" in markdown


def test_cells_cannot_break_the_table() -> None:
    summary = summarize(phase_span("resource", child(label="a|b\nc<d>", returncode=1, nodeid=None)))
    markdown = gha.step_summary_markdown(summary)
    assert "| a\\|b<br>c&lt;d&gt; | rc=1 |" in markdown
    rows = [line for line in markdown.splitlines() if line.startswith("| a")]
    assert len(rows) == 1


def test_a_green_run_says_so() -> None:
    summary = summarize(phase_span("l2", result("t.py::test_ok", "passed")))
    markdown = gha.step_summary_markdown(summary)
    assert markdown.startswith("## :white_check_mark: simpler: 1 passed")
    assert "No unrecovered failures." in markdown
    assert "<details>" not in markdown


# --- appending within 1 MiB ----------------------------------------------------------------


def test_a_small_summary_is_appended_whole(tmp_path: Path) -> None:
    target = tmp_path / "summary.md"
    target.write_text("# earlier step\n")
    assert gha.append_step_summary("## ours\n", target) is False
    assert target.read_text() == "# earlier step\n## ours\n"


def test_an_oversized_summary_is_cut_at_a_line_under_1_mib_counting_what_is_there(
    tmp_path: Path,
) -> None:
    target = tmp_path / "summary.md"
    target.write_text("x" * (MiB // 2) + "\n")
    markdown = "".join(f"| row {n} | {'y' * 90} |\n" for n in range(20_000))  # about 2 MiB
    assert gha.append_step_summary(markdown, target) is True
    data = target.read_bytes()
    assert len(data) <= MiB
    appended = data[MiB // 2 + 1 :].decode()
    body, notice = appended.rstrip("\n").rsplit("\n", 1)
    assert notice == gha.STEP_SUMMARY_CUT_NOTICE
    assert all(line.startswith("| row ") and line.endswith(" |") for line in body.splitlines()[:-1])
    assert markdown.startswith(body.rstrip("\n"))


def test_a_cut_inside_details_closes_it(tmp_path: Path) -> None:
    target = tmp_path / "summary.md"
    markdown = "<details><summary>s</summary>\n\n" + "| r |\n" * 300_000 + "</details>\n"
    assert gha.append_step_summary(markdown, target) is True
    text = target.read_text()
    assert len(text.encode()) <= MiB
    assert text.count("</details>") == 1
    assert text.endswith(gha.STEP_SUMMARY_CUT_NOTICE + "\n")


def test_a_full_summary_gets_nothing_more(tmp_path: Path) -> None:
    target = tmp_path / "summary.md"
    target.write_bytes(b"z" * MiB)
    assert gha.append_step_summary("## more\n", target) is True
    assert target.stat().st_size == MiB


def test_the_path_defaults_to_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "from_env.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    gha.append_step_summary("hello\n")
    assert target.read_text() == "hello\n"
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    with pytest.raises(ValueError, match="GITHUB_STEP_SUMMARY"):
        gha.append_step_summary("hello\n")


def test_an_unwritable_summary_raises_one_line_naming_it(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "summary.md"
    with pytest.raises(gha.StepSummaryUnwritable) as raised:
        gha.append_step_summary("x\n", target)
    assert isinstance(raised.value, OSError)
    assert str(target) in str(raised.value)
    assert "\n" not in str(raised.value)
