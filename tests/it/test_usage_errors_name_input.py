"""A usage error names what the user wrote (the file, the suite, the label, the entry's own
text), never a bare index they never wrote: each of ``simpler plan``, ``capacity``,
``schedule`` and ``history`` fed a bad input through the real command line, one line on
stderr, exit 2, no traceback."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from processes import run_python_m

EXIT_USAGE = 2
SMALL = {
    "filename": "test/srt/test_small.py",
    "backend": "cuda",
    "suite": "per-commit-1-gpu",
    "est_time": 60,
}
BIG = {
    "filename": "test/srt/test_big.py",
    "backend": "cuda",
    "suite": "per-commit-4-gpu",
    "est_time": 300,
}
SCHEDULE_DRY_RUN = ("schedule", "--devices", "0-1", "--dry-run", "jobs.json")
JOB_A = {"label": "a", "devices": 1, "cmd": ["true"]}  # a good job before the bad one


@dataclass(frozen=True)
class Bad:
    args: tuple[str, ...]
    files: dict[str, object]  # name -> JSON, written into the test's folder
    named: tuple[str, ...]  # what the user wrote, each in the message
    bare: str  # a regex of the bare index the message must not be


CASES = {
    "plan: a suite no runner class fits": Bad(
        (
            "plan",
            "--registry",
            "reg.json",
            "--runners",
            "1=gpu-1,2=gpu-2",
            "--target-minutes",
            "10",
        ),
        {"reg.json": [SMALL, BIG]},
        ("test/srt/test_big.py", "per-commit-4-gpu", "4 devices"),
        r"(^|: )\d+ needs",
    ),
    "plan: a class given no jobs": Bad(
        ("plan", "--registry", "reg.json", "--runners", "1=gpu-1,4=gpu-4", "--jobs", "1=2"),
        {"reg.json": [SMALL, BIG]},
        ("test/srt/test_big.py", "gpu-4"),
        r"(^|: )\d+ unit\(s\)",
    ),
    "plan: two classes of one size": Bad(
        ("plan", "--registry", "reg.json", "--runners", "2=gpu-a,2=gpu-b", "--jobs", "2=1"),
        {"reg.json": [SMALL]},
        ("gpu-a", "gpu-b"),
        r"two runner classes",
    ),
    "capacity: an entry without its filename": Bad(
        ("capacity", "--registry", "reg.json"),
        {"reg.json": [SMALL, {"backend": "npu", "suite": "stage-b-2-npu", "est_time": 5}]},
        ('"suite": "stage-b-2-npu"',),
        r"entry \[1\]:",
    ),
    "schedule: a job without a label": Bad(
        SCHEDULE_DRY_RUN,
        {"jobs.json": [JOB_A, {"devices": 2, "cmd": ["make", "check"]}]},
        ('"cmd": ["make", "check"]',),
        r"entry \d+",
    ),
    "schedule: a labelled job of no devices": Bad(
        SCHEDULE_DRY_RUN,
        {"jobs.json": [JOB_A, {"label": "warm-up", "devices": 0, "cmd": ["true"]}]},
        ("'warm-up'",),
        r"entry \d+",
    ),
    "history: a file that is not a report": Bad(
        ("history", "import", "--db", "history.db", "ok.jsonl", "notes.jsonl"),
        {"ok.jsonl": {"note": "not a record"}, "notes.jsonl": {"note": "not a record"}},
        ("ok.jsonl",),
        r"(file|report) \d+",
    ),
}


@pytest.mark.parametrize("bad", CASES.values(), ids=CASES.keys())
def test_the_message_names_what_the_user_wrote(bad: Bad, tmp_path: Path) -> None:
    for name, content in bad.files.items():
        (tmp_path / name).write_text(json.dumps(content) + "\n")
    done = run_python_m("simpler", *bad.args, cwd=tmp_path, timeout=120)
    lines = done.stderr.splitlines()
    assert done.returncode == EXIT_USAGE, done.stderr
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for written in bad.named:
        assert written in lines[0]
    assert not re.search(bad.bare, lines[0]), lines[0]
