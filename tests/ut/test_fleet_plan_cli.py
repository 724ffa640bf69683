"""``simpler plan`` on a capacity registry: every enabled per-commit registration in exactly
one job of a runner class that fits it, within the target; bad input one line, exit 2."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from simpler import cli


def main(argv: list[str]) -> int:
    """``simpler plan`` with ``argv``, as the command line has it."""
    return cli.main(["plan", *argv])


RUNNERS = "1=gpu-1,2=gpu-2,4=gpu-4,8=gpu-8"


def registry(tmp_path: Path) -> tuple[Path, dict[int, int]]:
    """40/12/8/4 registrations of 1/2/4/8-GPU suites, and one nightly one; index -> devices."""
    rng = random.Random(25)
    entries, devices = [], {}
    for count, size in ((40, 1), (12, 2), (8, 4), (4, 8)):
        for _ in range(count):
            devices[len(entries)] = size
            entries.append(
                {
                    "filename": f"test_{len(entries):03d}.py",
                    "backend": "cuda",
                    "suite": f"stage-b-test-{size}-gpu",
                    "est_time": round(rng.uniform(30, 400), 1),
                }
            )
    entries.append({"filename": "test_night.py", "backend": "cuda", "suite": "nightly-8-gpu",
                    "est_time": 3000})  # fmt: skip
    path = tmp_path / "registry.json"
    path.write_text(json.dumps(entries))
    return path, devices


def test_each_registration_lands_once_on_a_class_that_fits_within_the_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, devices = registry(tmp_path)
    out = tmp_path / "plan.json"
    code = main(["--registry", str(path), "--runners", RUNNERS, "--target-minutes", "15",
                 "--out", str(out)])  # fmt: skip
    table = capsys.readouterr().out
    assert code == 0
    document = json.loads(out.read_text())
    placed = [(unit, job["devices"]) for job in document["jobs"] for unit in job["units"]]
    assert sorted(unit for unit, _ in placed) == sorted(devices)  # the nightly one left out
    assert all(runner_devices == devices[unit] for unit, runner_devices in placed)
    assert all(job["est_wall_s"] <= 15 * 60 for job in document["jobs"])
    assert "units planned on: 64 on estimate" in table
    github = tmp_path / "m.json"
    main(["--registry", str(path), "--runners", RUNNERS, "--target-minutes", "15",
          "--format", "github"])  # fmt: skip
    matrix = json.loads(capsys.readouterr().out)
    assert [entry["job"] for entry in matrix["include"]] == [j["id"] for j in document["jobs"]]
    assert not github.exists()


def test_measured_durations_replace_the_estimates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = registry(tmp_path)
    durations = tmp_path / "durations.json"
    durations.write_text(json.dumps({"file:test_000.py": 5000.0, "test_001.py": 1.0}))
    code = main(["--registry", str(path), "--runners", RUNNERS, "--jobs", "1=2,2=1,4=1,8=1",
                 "--durations", str(durations), "--format", "json"])  # fmt: skip
    document = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [c["jobs"] for c in document["classes"]] == [2, 1, 1, 1]
    (holding,) = [job for job in document["jobs"] if 0 in job["units"]]
    assert holding["est_wall_s"] >= 5000  # the measured time, not the registry's estimate


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--runners", "1=gpu-1,2=gpu-2", "--target-minutes", "15"], "largest runner class has 2"),
        (["--runners", "one=gpu-1", "--target-minutes", "15"], "--runners"),
        (["--runners", RUNNERS, "--target-minutes", "0"], "--target-minutes"),
        (["--runners", RUNNERS, "--jobs", "1=2"], "given no jobs"),
        (["--runners", RUNNERS, "--target-minutes", "15", "--durations", "BAD"], "durations"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    path, _ = registry(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    argv = [str(bad) if arg == "BAD" else arg for arg in argv]
    out = tmp_path / "plan.json"
    code = main(["--registry", str(path), *argv, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and says in err and "Traceback" not in err
    assert not out.exists()
