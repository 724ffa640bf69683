"""A registry shaped like sglang's real one: empty suites, amd, nightly splits, pools per backend.

``capacity_data/sglang_like_registry.json`` holds 279 registrations written by hand with the
shapes of sglang's exported ``register_*_ci`` calls: CUDA suites derived from a stage and a
runner (extra ``stage``/``runner_config``/``folder`` fields), ``amd`` (not ``rocm``), NPU
registrations disabled with ``suite=""``, nightly flags inside per-commit suites,
``nightly-``/``weekly-`` suites, and cpu/xpu/mlx/musa suites without a device-count token.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from simpler import cli

REGISTRY = Path(__file__).parent / "capacity_data" / "sglang_like_registry.json"


def capacity(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "simpler.capacity", "--registry", str(REGISTRY), *map(str, args)],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        timeout=60,
    )


def as_json(*args: str) -> dict[str, Any]:
    result = capacity("--format", "json", *args)
    assert result.returncode == 0, result.stderr
    decoded: dict[str, Any] = json.loads(result.stdout)
    return decoded


def entries() -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads(REGISTRY.read_text())
    return loaded


def test_the_real_shapes_are_read_without_lenient_and_every_registration_counts() -> None:
    result = capacity()
    assert result.returncode == 0
    warnings = result.stderr.splitlines()
    assert warnings[0].startswith(
        f"simpler capacity: warning: {REGISTRY}: 9 registrations have no suite; "
        "counted as unsized: entry [249] "
    )
    totals = as_json()["totals"]
    disabled = sum(1 for entry in entries() if entry["disabled"] is not None)
    assert (totals["enabled"], totals["disabled"]) == (len(entries()) - disabled, disabled)
    assert "" in totals["suites"]  # the nine disabled NPU registrations, as they are


def test_a_registration_without_a_suite_is_listed_unsized_with_its_reason() -> None:
    out = capacity("--section", "all").stdout
    assert "| (no suite) | npu | 0 | 9 | no suite given |" in out
    unsized = out.split("<summary><b>Unsized</b>", 1)[1].split("</details>", 1)[0]
    assert "**Disabled (10)**" in unsized
    assert (
        "| (no suite) | npu | test/registered/ascend/test_npu_0252.py | "
        "Temporarily disabled: suite not assigned for a3 runners |"
    ) in unsized


def test_backend_columns_follow_one_fixed_order_with_amd_second() -> None:
    out = capacity().stdout
    header = next(line for line in out.splitlines() if line.startswith("| Devices | cuda"))
    assert header == "| Devices | cuda | amd | npu | cpu | xpu | musa | mlx | Total | Disabled |"


def test_the_summary_splits_per_commit_and_nightly_with_device_hours() -> None:
    document = as_json()
    expected: dict[str, dict[str, float]] = {}
    for entry in entries():
        if entry["disabled"] is not None or entry["backend"] != "amd":
            continue
        night = entry["nightly"] or entry["suite"].startswith(("nightly-", "weekly-"))
        devices = 8 if "-8-gpu" in entry["suite"] else 1
        split = expected.setdefault("nightly" if night else "per_commit", {"n": 0, "h": 0.0})
        split["n"] += 1
        split["h"] += entry["est_time"] * devices / 3600
    amd = document["totals"]["by_backend"]["amd"]
    for name, split in expected.items():
        assert amd[name]["enabled"] == split["n"]
        assert amd[name]["device_hours"] == pytest.approx(split["h"], abs=0.001)
    eight = document["device_count_summary"]["8"]["by_backend"]["amd"]
    assert (eight["per_commit"]["enabled"], eight["nightly"]["enabled"]) == (5, 3)
    # Unsized registrations have no device count, so nobody knows their device-hours.
    assert document["device_count_summary"]["unsized"]["per_commit"]["device_hours"] is None
    out = capacity().stdout
    assert "| 8 | amd | 5 | 3 | 19.6 | 16.9 |" in out
    assert "Per commit: 205 registrations, 75.6 device-hours. Nightly: 54 registrations" in out


def test_a_suite_that_runs_partly_at_night_shows_both_counts() -> None:
    out = capacity("--section", "by-suite").stdout
    row = "| stage-b-test-1-gpu-large | cuda | 1 | 49 | 2 | 3h 55m | 43 per-commit, 6 nightly |"
    assert row in out
    suite = next(
        row
        for row in as_json()["by_suite"]
        if (row["suite"], row["backend"]) == ("stage-b-test-1-gpu-large", "cuda")
    )
    assert (suite["type"], suite["per_commit"], suite["nightly"]) == ("Nightly", 43, 6)


@pytest.mark.parametrize("name", ["amd", "rocm", "AMD"])
def test_backend_filters_every_section_and_the_json(name: str) -> None:
    document = as_json("--backend", name)
    assert set(document["totals"]["backends"]) == {"amd"}
    assert {row["backend"] for row in document["by_suite"]} == {"amd"}
    out = capacity("--backend", name, "--section", "all").stdout
    assert "| Devices | amd | Total | Disabled |" in out
    assert "**cuda**" not in out and "| cuda |" not in out


def test_backend_is_repeatable_and_a_name_without_registrations_is_said() -> None:
    result = capacity("--backend", "npu", "--backend", "tpu", "--format", "json")
    assert result.returncode == 0
    assert set(json.loads(result.stdout)["totals"]["backends"]) == {"npu"}
    assert "warning: --backend tpu: no registrations on it (backends: amd, cpu, cuda" in (
        result.stderr
    )


def test_a_pool_per_backend_runs_one_dry_run_each_on_its_own_devices(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["--registry", str(REGISTRY), "--pool", "cuda=8,rocm=8", "--format", "json"]
    assert cli.main(["capacity", *args]) == 0
    pools = json.loads(capsys.readouterr().out)["pools"]
    assert [(pool["backend"], pool["pool_size"], pool["schedule"]) for pool in pools] == [
        ("cuda", 8, "per-commit"),
        ("rocm", 8, "per-commit"),  # the amd registrations: rocm names the same slot
    ]
    # cuda: 129 enabled per-commit, of which mm-gen's 5 are unsized; amd: all 44 are sized.
    assert [pool["jobs"] for pool in pools] == [124, 44]
    assert pools[0]["left_out"] == {"unsized": 5, "too_big": 0}
    for pool in pools:
        assert pool["makespan_s"] >= pool["lower_bound_s"] > 0


def test_nightly_pools_simulate_the_night(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--registry", str(REGISTRY), "--pool", "npu=4", "--nightly"]
    assert cli.main(["capacity", *args]) == 0
    out = capsys.readouterr().out
    assert "## Pool of 4 devices for npu, nightly" in out
    assert "dry run over 19 enabled nightly registrations" in out


def test_nightly_without_a_pool_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["capacity", "--registry", str(REGISTRY), "--nightly"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "simpler capacity: error: --nightly chooses what --pool simulates: give --pool too\n"
    )


@pytest.mark.parametrize(
    ("spec", "named"),
    [
        ("cuda=8,x", "'x' in 'cuda=8,x' is not BACKEND=N"),
        ("cuda=eight", "'cuda=eight': not a whole number of devices"),
        ("cuda=8,amd=0", "'amd=0' in 'cuda=8,amd=0': needs at least 1 device, got 0"),
        ("amd=8,rocm=4", "'rocm=4' in 'amd=8,rocm=4' repeats the pool of 'amd'"),
        ("=4", "'=4' is not BACKEND=N"),
        ("0", "'0': needs at least 1 device, got 0"),
    ],
)
def test_a_bad_pool_names_the_bad_part_in_one_line(
    spec: str, named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["capacity", "--registry", str(REGISTRY), "--pool", spec]) == 2
    err = capsys.readouterr().err
    assert named in err
    assert err.count("\n") == 1 and "Traceback" not in err
