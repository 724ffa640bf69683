"""``simpler capacity`` end to end, run as ``python -m simpler.capacity`` in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from simpler import cli
from simpler.capacity.pool import pool_jobs
from simpler.capacity.registry import load_registry
from simpler.capacity.step_summary import CUT_NOTICE, STEP_SUMMARY_LIMIT, fit

# The keys every size group had before the per-commit/nightly split, meaning what they meant.
KEPT_KEYS = ("enabled", "disabled", "est_time_s", "backends", "suites")


def registration(suite: str, **overrides: Any) -> dict[str, Any]:
    base = {"filename": f"test_{suite}.py", "backend": "cuda", "suite": suite, "est_time": 10}
    return {**base, "nightly": False, "disabled": None, **overrides}


def write_registry(tmp_path: Path, entries: list[Any], name: str = "registry.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(entries))
    return path


def capacity(
    *args: str | Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    child_env = {"PATH": "/usr/bin:/bin", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "simpler.capacity", *map(str, args)],
        capture_output=True,
        text=True,
        env=child_env,
        timeout=60,
    )


def test_a_registry_prints_the_summary(tmp_path: Path) -> None:
    path = write_registry(tmp_path, [registration("1-gpu"), registration("8-gpu")])
    result = capacity("--registry", path)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.startswith("## Device Count Summary\n")
    assert "| 8 | 1 | 1 | 0 |" in result.stdout


def test_json_lines_in_json_out(tmp_path: Path) -> None:
    path = tmp_path / "registry.jsonl"
    lines = [registration("16-npu", backend="npu"), registration("1-hcu", backend="hcu")]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    result = capacity("--registry", path, "--format", "json")
    assert result.returncode == 0
    summary = json.loads(result.stdout)["device_count_summary"]
    assert summary["16"]["backends"] == {"npu": 1}
    assert summary["1"]["backends"] == {"hcu": 1}


def test_a_bad_entry_exits_2_naming_the_file_and_the_entry_without_a_traceback(
    tmp_path: Path,
) -> None:
    entries = [registration("1-gpu"), registration("2-gpu", filename="test_bad.py", est_time="x")]
    path = write_registry(tmp_path, entries)
    result = capacity("--registry", path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"simpler capacity: error: {path}: entry [1] (filename 'test_bad.py'): est_time must be "
        'a number of seconds, got string "x"\n'
    )


def test_a_missing_registry_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = capacity("--registry", tmp_path / "absent.json")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "cannot read registry" in result.stderr and "Traceback" not in result.stderr


def test_lenient_warns_about_each_bad_entry_and_reports_the_rest(tmp_path: Path) -> None:
    no_time = registration("4-gpu", filename="test_no_time.py")
    del no_time["est_time"]
    entries = [registration("1-gpu"), no_time, registration("2-gpu", nightly="no")]
    result = capacity(
        "--registry", write_registry(tmp_path, entries), "--lenient", "--format", "json"
    )
    assert result.returncode == 0
    warnings = result.stderr.splitlines()
    assert len(warnings) == 2
    assert "entry [1] (filename 'test_no_time.py'): est_time is missing (skipped)" in warnings[0]
    assert "entry [2] (filename 'test_2-gpu.py'): nightly must be true or false" in warnings[1]
    assert json.loads(result.stdout)["totals"]["enabled"] == 1


def test_unsized_suites_are_named_on_stderr(tmp_path: Path) -> None:
    entries = [registration("1-gpu"), registration("stress"), registration("2-gpu-4-gpu")]
    result = capacity("--registry", write_registry(tmp_path, entries))
    assert result.returncode == 0
    assert result.stderr == (
        "simpler capacity: warning: 2 unsized suites (no device-count token, or tokens that "
        "disagree): 2-gpu-4-gpu, stress\n"
    )
    assert "### Unsized suites (2)" in result.stdout


def test_the_unsized_warning_names_twenty_then_counts_the_rest(tmp_path: Path) -> None:
    entries = [registration(f"mm-gen-{index:02d}") for index in range(25)]
    result = capacity("--registry", write_registry(tmp_path, entries))
    assert result.stderr.startswith("simpler capacity: warning: 25 unsized suites")
    assert "mm-gen-19, and 5 more\n" in result.stderr
    assert "mm-gen-20" not in result.stderr
    assert "mm-gen-24" in result.stdout  # the report itself lists them all


def test_collect_reads_device_count_markers_from_test_files(tmp_path: Path) -> None:
    scene = tmp_path / "st" / "test_scene.py"
    scene.parent.mkdir()
    scene.write_text(
        textwrap.dedent(
            """
            import pytest

            def test_single():
                pass

            @pytest.mark.device_count(4, est=90)
            def test_four():
                pass
            """
        )
    )
    result = capacity("--collect", tmp_path / "st", "--format", "json")
    assert (result.returncode, result.stderr) == (0, "")
    summary = json.loads(result.stdout)["device_count_summary"]
    assert {key: summary["1"][key] for key in KEPT_KEYS} == {
        "enabled": 1,
        "disabled": 0,
        "est_time_s": 1.0,
        "backends": {"sim": 1},
        "suites": ["1-npu-scene"],
    }
    assert summary["4"]["est_time_s"] == 90.0


def test_registry_and_collect_add_up(tmp_path: Path) -> None:
    scene = tmp_path / "test_scene.py"
    scene.write_text("def test_one():\n    pass\n")
    path = write_registry(tmp_path, [registration("1-gpu")])
    result = capacity("--registry", path, "--collect", scene, "--format", "json")
    assert json.loads(result.stdout)["totals"]["backends"] == {"cuda": 1, "sim": 1}


def test_nothing_to_report_is_a_usage_error() -> None:
    result = capacity()
    assert result.returncode == 2
    assert "give --registry FILE and/or --collect PATHS" in result.stderr


def test_a_bad_flag_is_a_usage_error_and_main_returns_its_code() -> None:
    assert cli.main(["capacity", "--section", "sideways"]) == 2
    assert cli.main(["capacity", "--pool", "0", "--registry", "x"]) == 2


def test_pool_runs_the_scheduler_dry_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = [
        registration("2-gpu", est_time=100),
        registration("4-gpu", est_time=50),
        registration("8-gpu", est_time=10),  # the whole pool: waits until 2-gpu ends at 100 s
        registration("nightly-2-gpu"),  # not per-commit: left out
        registration("1-gpu", disabled="off"),  # disabled: left out
        registration("16-gpu"),  # larger than the pool
        registration("stress"),  # unsized
    ]
    code = cli.main(
        ["capacity", "--registry", str(write_registry(tmp_path, entries)), "--pool", "8"]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "## Pool of 8 devices" in out
    assert "dry run over 3 enabled per-commit registrations" in out
    # 480 device-seconds over 8 devices for 110 s; the 100 s job bounds it from below.
    assert "makespan 1m 50s (lower bound 1m 40s), utilization 55%." in out
    assert "Left out: 1 unsized, 1 needing more than 8 devices." in out


def test_pool_jobs_are_the_enabled_per_commit_registrations_that_fit(tmp_path: Path) -> None:
    entries = [registration("2-gpu", est_time=100), registration("16-gpu"), registration("stress")]
    loaded = load_registry(write_registry(tmp_path, entries), lenient=False)
    jobs, unsized, too_big = pool_jobs(loaded.registrations, 8)
    assert [(job.devices, job.est_s) for job in jobs] == [(2, 100.0)]
    assert (unsized, too_big) == (1, 1)


def test_pool_names_a_scheduler_that_cannot_be_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "simpler.scheduler.simulate", None)  # import raises
    code = cli.main(["capacity", "--registry", str(write_registry(tmp_path, [])), "--pool", "8"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("simpler capacity: error: --pool: simpler.scheduler.simulate cannot")
    assert err.count("\n") == 1


def test_step_summary_needs_the_github_variable(tmp_path: Path) -> None:
    result = capacity("--registry", write_registry(tmp_path, []), "--step-summary")
    assert (result.returncode, result.stdout) == (2, "")  # checked before any report is printed
    assert "$GITHUB_STEP_SUMMARY is not set" in result.stderr


def test_step_summary_appends_the_markdown(tmp_path: Path) -> None:
    summary = tmp_path / "step_summary.md"
    summary.write_text("# Earlier step output\n")
    path = write_registry(tmp_path, [registration("1-gpu")])
    result = capacity(
        "--registry",
        path,
        "--step-summary",
        "--format",
        "json",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert result.returncode == 0
    json.loads(result.stdout)  # stdout keeps the chosen format
    assert summary.read_text().startswith("# Earlier step output\n## Device Count Summary\n")


def test_a_huge_step_summary_is_cut_under_1_mib_at_a_line_with_a_notice(tmp_path: Path) -> None:
    long_names = [registration(f"{'x' * 150}-{index}-{1 + index % 4}-gpu") for index in range(8000)]
    summary = tmp_path / "step_summary.md"
    result = capacity(
        "--registry",
        write_registry(tmp_path, long_names),
        "--section",
        "all",
        "--step-summary",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert result.returncode == 0
    assert len(result.stdout.encode()) > STEP_SUMMARY_LIMIT  # stdout is never cut
    written = summary.read_bytes()
    assert len(written) <= STEP_SUMMARY_LIMIT
    text = written.decode()
    assert text.endswith(f"\n{CUT_NOTICE}\n")
    kept = text[: -len(f"\n{CUT_NOTICE}\n")]
    assert kept.count("<details>") == kept.count("</details>")  # the notice is not hidden
    report_part = kept.removesuffix("</details>\n")  # a closer added for a <details> left open
    assert report_part.endswith("\n") and result.stdout.startswith(report_part)  # whole lines
    assert "step summary was cut" in result.stderr


def test_fit_keeps_whole_lines_and_leaves_small_reports_alone() -> None:
    report = "## Title\n\n| a |\n| b |\n"
    assert fit(report, 1000) == report
    cut = fit("line one\n" + "é" * 600 + "\n", len(CUT_NOTICE) + 100)
    assert cut == f"line one\n\n{CUT_NOTICE}\n"
    assert fit(report * 10, 10) == ""  # no room for even the notice: write nothing


def test_the_command_never_imports_the_device_stack(tmp_path: Path) -> None:
    path = write_registry(tmp_path, [registration("1-gpu")])
    script = (
        "import sys\n"
        "from simpler.cli import main\n"
        f"assert main(['capacity', '--registry', {str(path)!r}, '--section', 'all']) == 0\n"
        "loaded = [m for m in ('cppyy', 'numpy', 'simpler.runner', 'pytest') if m in sys.modules]\n"
        "print('loaded:', loaded, file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert "loaded: []" in result.stderr


def test_one_pool_keeps_its_json_key_and_is_listed_among_the_pools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = [registration("2-gpu", est_time=100), registration("4-gpu", backend="amd")]
    args = ["--registry", str(write_registry(tmp_path, entries)), "--pool", "8"]
    assert cli.main(["capacity", *args, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["pool"]["pool_size"] == 8
    assert document["pool"]["jobs"] == 2  # one pool mixes the backends, as it always did
    assert document["pools"] == [document["pool"]]
    assert (document["pool"]["backend"], document["pool"]["schedule"]) == (None, "per-commit")
