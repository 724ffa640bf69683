"""Bad input to every command: one clear line on stderr, the documented exit code, no traceback.

Exit codes: 2 for usage errors (bad flags, bad device specs, bad or missing input files,
a job that can never fit), 3 for infrastructure failures (a report file that cannot be
read, a JUnit file that cannot be written). Each row runs ``python -m simpler`` in a
process of its own and must also write nothing: a refused ``simpler run`` fails before
any pytest process starts and leaves no report record behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXIT_USAGE, EXIT_INFRA = 2, 3
TMP = "{tmp}"  # in a row's args: the row's own tmp_path
REPORT_NAME = "report.jsonl"  # SIMPLER_REPORT of every row, inside its tmp_path
GOLDEN_SCENARIO = "tests/it/scenarios/scenario_golden.py"  # L2 tests that open a pooled worker

_REGISTRATION = {"filename": "test_a.py", "backend": "npu", "suite": "stage-a-test-1-npu-a3"}
_JOB = {"label": "one", "devices": 1, "cmd": ["true"], "est_s": 1.0}
_RECORD = {"schema": 1, "run": "r1", "ts": 1.0, "phase": "l2"}
VALID_REPORT = "".join(
    json.dumps(record) + "\n"
    for record in (
        {**_RECORD, "type": "phase", "event": "start"},
        {**_RECORD, "type": "test", "nodeid": "tests/st/test_a.py::test_ok", "outcome": "passed"},
        {**_RECORD, "type": "phase", "event": "end", "returncode": 0, "duration_s": 1.0},
    )
)
# A record torn mid-write, raw binary, a NUL-laden line and JSON that is no record: nothing to read.
TORN_AND_BINARY_REPORT = (
    b'{"schema":1,"run":"r1","ts":1.0,"phase":"l2","type":"te\n'
    b"\xff\xfe\x00\x9c binary \x80\x81\n"
    b"\x00\x00\x00\x00\n"
    b'{"type":"not-a-record-type"}\n'
    b'["a", "list"]\n'
)


@dataclass(frozen=True)
class BadInput:
    """One bad input: the command line, its environment and files, and the refusal it must get."""

    args: tuple[str, ...]
    exit_code: int
    stderr_has: str  # the one stderr line must contain this
    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, str | bytes] = field(default_factory=dict)  # written into tmp_path first


def _json(value: object) -> str:
    return json.dumps(value)


def row(
    test_id: str,
    *args: str,
    code: int = EXIT_USAGE,
    has: str,
    env: dict[str, str] | None = None,
    files: dict[str, str | bytes] | None = None,
) -> pytest.ParameterSet:
    bad = BadInput(tuple(args), code, has, env or {}, files or {})
    return pytest.param(bad, id=test_id)


RUN = ("run", "--platform", "a5sim")
RUN_ON_0 = (*RUN, "--device", "0")
SCHEDULE = ("schedule", "--devices", "0-1")
JOBS = f"{TMP}/jobs.json"
REGISTRY = f"{TMP}/registry.json"
ONE_JOB = [_JOB]  # a good jobs file, for the rows whose fault is elsewhere
ONE_REGISTRATION = [{**_REGISTRATION, "est_time": 1}]  # a good registry, likewise
VALID = f"{TMP}/valid.jsonl"  # holds VALID_REPORT
IN_THE_WAY = {"file.txt": ""}  # a file where a row's output wants a folder of that name
# -n and --isolate: two answers to how the L2 tests share processes.
TWO_ANSWERS = "-n 2 after -- and --isolate file both say how the L2 tests share processes"


def _file(name: str, content: object) -> dict[str, str | bytes]:
    """``{name: content}`` for a row's files: text and bytes as they are, anything else as JSON;
    None for no file at all."""
    if content is None:
        return {}
    return {name: content if isinstance(content, (str, bytes)) else _json(content)}


def schedule(
    test_id: str,
    *flags: str,
    devices: tuple[str, ...] = ("--devices", "0-1"),
    jobs: object = ONE_JOB,
    has: str,
) -> pytest.ParameterSet:
    """``simpler schedule DEVICES FLAGS JOBS``, the jobs file holding ``jobs``."""
    return row(test_id, "schedule", *devices, *flags, JOBS, files=_file("jobs.json", jobs), has=has)


def capacity(
    test_id: str, *flags: str, registry: object = ONE_REGISTRATION, has: str
) -> pytest.ParameterSet:
    """``simpler capacity --registry REGISTRY FLAGS``, the registry holding ``registry``."""
    files = _file("registry.json", registry)
    return row(test_id, "capacity", "--registry", REGISTRY, *flags, files=files, has=has)


def valid_report(
    test_id: str,
    *flags: str,
    code: int = EXIT_USAGE,
    has: str,
    files: dict[str, str | bytes] | None = None,
) -> pytest.ParameterSet:
    """``simpler report --file`` a valid report, then ``FLAGS``; ``files`` beside it."""
    files = {"valid.jsonl": VALID_REPORT, **(files or {})}
    return row(test_id, "report", "--file", VALID, *flags, files=files, code=code, has=has)


BAD_INPUTS = [
    # simpler run: device specs
    row("run-device-open-range", *RUN, "--device", "0-", has="bad device spec '0-'"),
    row("run-device-letter", *RUN, "--device", "a", has="bad device spec 'a'"),
    row("run-device-backwards", *RUN, "--device", "3-1", has="runs backwards"),
    row("run-device-negative", *RUN, "--device=-1", has="bad device spec '-1'"),
    row("run-device-empty", *RUN, "--device", "", has="device spec is empty"),
    # simpler run: platform, phases, parallelism
    row("run-no-platform", "run", "--device", "0", has="required: --platform"),
    row("run-no-device", *RUN, has="required: --device"),
    row(
        "run-unknown-platform",
        "run",
        "--platform",
        "a9",
        "--device",
        "0",
        has="unknown platform 'a9'",
    ),
    row(
        "run-cuda-without-driver",
        "run",
        "--platform",
        "cuda",
        "--device",
        "0",
        "--",
        GOLDEN_SCENARIO,
        has="platform cuda needs the NVIDIA driver: /nonexistent/libcuda.so.1 cannot be loaded",
        env={"SIMPLER_CUDA_DRIVER": "/nonexistent/libcuda.so.1"},
    ),
    row(
        "run-gpu-fault-on-a-sim",
        *RUN_ON_0,
        "--",
        GOLDEN_SCENARIO,
        "--simpler-sim-fault",
        "illegal_address@x",
        has="platform 'a5sim' cannot inject illegal_address",
    ),
    row("run-unknown-phase", *RUN_ON_0, "--phases", "l2,bogus", has="unknown phase bogus"),
    row("run-no-phase", *RUN_ON_0, "--phases", ",", has="unknown phase (none)"),
    row("run-j-zero", *RUN, "--device", "0-1", "-j", "0", has="expected a positive integer"),
    row("run-j-negative", *RUN, "--device", "0-1", "--jobs=-2", has="expected a positive integer"),
    row("run-j-word", *RUN, "--device", "0-1", "-j", "two", has="expected a positive integer"),
    row("run-j-fraction", *RUN, "--device", "0-1", "-j", "1.5", has="expected a positive integer"),
    row(
        "run-jobs-env-zero",
        *RUN_ON_0,
        env={"SIMPLER_JOBS": "0"},
        has="SIMPLER_JOBS must be a positive integer, got '0'",
    ),
    row(
        "run-xdist-and-isolate",
        *RUN_ON_0,
        "--isolate",
        "file",
        "--",
        GOLDEN_SCENARIO,
        "-n",
        "2",
        has=TWO_ANSWERS,
    ),
    # simpler run: timeouts
    row("run-job-timeout-negative", *RUN_ON_0, "--job-timeout=-1", has="--job-timeout"),
    row("run-job-timeout-zero", *RUN_ON_0, "--job-timeout", "0", has="--job-timeout"),
    row("run-session-timeout-negative", *RUN_ON_0, "--session-timeout=-5", has="--session-timeout"),
    row("run-session-timeout-zero", *RUN_ON_0, "--session-timeout", "0", has="--session-timeout"),
    row(
        "run-session-timeout-text",
        *RUN_ON_0,
        "--session-timeout",
        "soon",
        has="--session-timeout",
    ),
    # simpler run: shards
    row("run-shard-zero", *RUN_ON_0, "--shard", "0/2", has="bad shard '0/2'"),
    row("run-shard-past-count", *RUN_ON_0, "--shard", "3/2", has="bad shard '3/2'"),
    row("run-shard-text", *RUN_ON_0, "--shard", "x", has="bad shard 'x'"),
    # simpler run: faults and environment
    row(
        "run-env-faults-attempt-zero",
        *RUN_ON_0,
        env={"SIMPLER_SIM_FAULTS": "hang@x#0"},
        has="SIMPLER_SIM_FAULTS",
    ),
    row(
        "run-env-faults-unknown",
        *RUN_ON_0,
        env={"SIMPLER_SIM_FAULTS": "meltdown"},
        has="unknown fault 'meltdown'",
    ),
    row(
        "run-sim-fault-attempt-zero",
        *RUN_ON_0,
        "--",
        "--simpler-sim-fault",
        "hang@x#0",
        has="--simpler-sim-fault",
    ),
    row(
        "run-sim-fault-no-selector",
        *RUN_ON_0,
        "--",
        "--simpler-sim-fault=launch_fail@",
        has="needs a selector",
    ),
    row(
        "run-runner-library-missing",
        "run",
        "--platform",
        "myhw",
        "--device",
        "0",
        env={"SIMPLER_RUNNER_LIBRARY": "{tmp}/no-such-runner.so"},
        has="SIMPLER_RUNNER_LIBRARY",
        code=EXIT_INFRA,
    ),
    row(
        "run-runner-library-not-a-library",
        "run",
        "--platform",
        "myhw",
        "--device",
        "0",
        env={"SIMPLER_RUNNER_LIBRARY": "{tmp}/runner.so"},
        files={"runner.so": "not a shared library, only some text that is long enough" * 20},
        has="runner.so: cannot load it (",
        code=EXIT_INFRA,
    ),
    row(
        "run-env-reset-attempts",
        *RUN_ON_0,
        "--phases",
        "l2",
        "--",
        GOLDEN_SCENARIO,
        env={"SIMPLER_RESET_ATTEMPTS": "x"},
        has="SIMPLER_RESET_ATTEMPTS",
    ),
    row(
        "run-env-op-timeout",
        *RUN_ON_0,
        "--phases",
        "l2",
        "--",
        GOLDEN_SCENARIO,
        env={"SIMPLER_OP_TIMEOUT_MS": "abc"},
        has="SIMPLER_OP_TIMEOUT_MS",
    ),
    row(
        "run-env-cuda-spin",
        *RUN_ON_0,
        "--phases",
        "l2",
        "--",
        GOLDEN_SCENARIO,
        env={"SIMPLER_CUDA_SPIN_MS": "0"},
        has="SIMPLER_CUDA_SPIN_MS must be a positive integer",
    ),
    row(
        "run-report-under-a-file",
        *RUN_ON_0,
        "--phases",
        "report",
        "--report",
        f"{TMP}/file.txt/report.jsonl",
        files={"file.txt": ""},
        code=EXIT_INFRA,
        has="report file",
    ),
    # simpler schedule
    schedule(
        "schedule-job-over-pool",
        jobs=[_JOB, {**_JOB, "label": "big", "devices": 4}],
        has="can never fit the pool of 2 device(s): big needs 4",
    ),
    schedule(
        "schedule-dry-run-job-over-pool",
        "--dry-run",
        jobs=[{**_JOB, "devices": 3}],
        has="can never fit",
    ),
    schedule("schedule-jobs-missing", jobs=None, has="cannot read jobs file"),
    schedule("schedule-jobs-invalid-json", jobs='[{"label": "one",', has="is not valid JSON"),
    schedule("schedule-jobs-binary", jobs=b"\xff\xfe\x00\x01", has="is not valid JSON"),
    schedule("schedule-jobs-not-a-list", jobs={"jobs": [_JOB]}, has="must hold a JSON list"),
    schedule(
        "schedule-job-zero-devices",
        jobs=[{**_JOB, "devices": 0}],
        has="'devices' must be a device count",
    ),
    schedule(
        "schedule-job-cmd-string",
        jobs=[{**_JOB, "cmd": "true"}],
        has="'cmd' must be a non-empty list",
    ),
    schedule(
        "schedule-job-negative-estimate",
        jobs=[{**_JOB, "est_s": -3}],
        has="'est_s' must be a number",
    ),
    schedule(
        "schedule-job-no-label",
        jobs=[{"devices": 1, "cmd": ["true"]}],
        has="'label' must be a non-empty string",
    ),
    schedule("schedule-duplicate-labels", jobs=[_JOB, _JOB], has="duplicate label(s) one"),
    schedule(
        "schedule-devices-open-range", devices=("--devices", "0-"), has="bad device spec '0-'"
    ),
    schedule("schedule-devices-negative", devices=("--devices=-1",), has="bad device spec '-1'"),
    schedule("schedule-job-timeout-negative", "--job-timeout=-1", has="--job-timeout"),
    schedule("schedule-session-timeout-zero", "--session-timeout", "0", has="--session-timeout"),
    row("schedule-no-jobs-file", *SCHEDULE, has="required: JOBS.json"),
    # simpler capacity
    capacity("capacity-registry-missing", registry=None, has="cannot read registry"),
    row("capacity-registry-a-directory", "capacity", "--registry", TMP, has="cannot read registry"),
    capacity("capacity-registry-invalid-json-lines", registry="{not json\n", has="not valid JSON"),
    capacity(
        "capacity-registry-broken-list",
        registry=_json([{**_REGISTRATION, "est_time": 1}])[:-1],
        has="not valid JSON at line 1",
    ),
    capacity("capacity-registry-no-est-time", registry=[_REGISTRATION], has="est_time is missing"),
    capacity(
        "capacity-registry-text-est-time",
        registry=[{**_REGISTRATION, "est_time": "12s"}],
        has='est_time must be a number of seconds, got string "12s"',
    ),
    row("capacity-no-input", "capacity", has="give --registry FILE and/or --collect PATHS"),
    row(
        "capacity-collect-missing",
        "capacity",
        "--collect",
        f"{TMP}/no_such_dir",
        has="no such file or directory",
    ),
    capacity(
        "capacity-step-summary-outside-actions",
        "--step-summary",
        has="GITHUB_STEP_SUMMARY is not set",
    ),
    row("capacity-unknown-flag", "capacity", "--bogus", has="unrecognized arguments: --bogus"),
    row("capacity-unknown-format", "capacity", "--format", "yaml", has="invalid choice: 'yaml'"),
    capacity("capacity-pool-zero", "--pool", "0", has="--pool"),
    # simpler report
    row(
        "report-file-missing",
        "report",
        "--file",
        f"{TMP}/missing.jsonl",
        code=EXIT_INFRA,
        has="cannot read report file",
    ),
    row("report-default-missing", "report", code=EXIT_INFRA, has="cannot read report file"),
    row("report-file-a-directory", "report", "--file", TMP, code=EXIT_INFRA, has="cannot read"),
    row(
        "report-torn-and-binary-lines",
        "report",
        "--file",
        f"{TMP}/torn.jsonl",
        files={"torn.jsonl": TORN_AND_BINARY_REPORT},
        code=EXIT_INFRA,
        has="no readable record",
    ),
    valid_report(
        "report-junit-under-a-file",
        "--junit",
        f"{TMP}/file.txt/junit.xml",
        files=IN_THE_WAY,
        code=EXIT_INFRA,
        has="cannot write JUnit XML",
    ),
    valid_report(
        "report-timeline-not-svg-or-html",
        "--timeline",
        f"{TMP}/timeline.png",
        has="must end in .svg or .html",
    ),
    valid_report(
        "report-timeline-under-a-file",
        "--timeline",
        f"{TMP}/file.txt/timeline.svg",
        files=IN_THE_WAY,
        code=EXIT_INFRA,
        has="cannot write timeline",
    ),
    valid_report("report-tail-lines-zero", "--tail-lines", "0", has="--tail-lines"),
    valid_report("report-args-after-dashes", "--", "-x", has="unexpected arguments after --"),
    # simpler lifecycle, and no command at all
    row("lifecycle-without-mermaid", "lifecycle", has="required: --mermaid"),
    row("lifecycle-extra-argument", "lifecycle", "--mermaid", "extra", has="unrecognized"),
    row("unknown-command", "deploy", has="invalid choice: 'deploy'"),
    row("no-command", has="required: command"),
]


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with a digest of its bytes."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def _env(tmp_path: Path, extra: dict[str, str]) -> dict[str, str]:
    """The caller's environment without simpler's or GitHub's knobs, plus the row's own."""
    kept = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SIMPLER_", "GITHUB_"))
    }
    return {
        **kept,
        "SIMPLER_OP_TIMEOUT_MS": "150",
        "SIMPLER_REPORT": str(tmp_path / REPORT_NAME),
        **{key: value.replace(TMP, str(tmp_path)) for key, value in extra.items()},
    }


@pytest.mark.parametrize("bad", BAD_INPUTS)
def test_bad_input_gets_one_clear_line_and_its_exit_code(bad: BadInput, tmp_path: Path) -> None:
    for name, content in bad.files.items():
        target = tmp_path / name
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    before = _snapshot(tmp_path)
    argv = [arg.replace(TMP, str(tmp_path)) for arg in bad.args]

    done = subprocess.run(
        [sys.executable, "-m", "simpler", *argv],
        cwd=ROOT,
        env=_env(tmp_path, bad.env),
        capture_output=True,
        text=True,
        errors="replace",
        timeout=60,
    )

    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].strip(), f"stderr is not one line: {done.stderr!r}"
    assert bad.stderr_has in lines[0]
    assert done.returncode == bad.exit_code, (done.returncode, done.stderr)
    if "torn.jsonl" in bad.files:
        # The reader skips what it cannot parse; it never rewrites or truncates the file.
        assert (tmp_path / "torn.jsonl").read_bytes() == bad.files["torn.jsonl"]
    # Refused input writes nothing: no report record, no JUnit file, no output of any kind.
    assert _snapshot(tmp_path) == before
    assert not (tmp_path / REPORT_NAME).exists()


def test_the_table_covers_every_command() -> None:
    commands = {param.values[0].args[0] for param in BAD_INPUTS if param.values[0].args}
    assert commands >= {"run", "schedule", "capacity", "report", "lifecycle"}
    assert len(BAD_INPUTS) >= 25
