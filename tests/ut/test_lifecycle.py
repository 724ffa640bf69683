"""The worker lifecycle on the real simulated card: heal after a fault, skip when it cannot."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pooled_workers import device_error, lifecycle_path, started_worker

from recovery import poisons_worker
from recovery.diagram import mermaid
from simpler import DeviceRuntimeError, GoldenMismatch

ROOT = Path(__file__).resolve().parents[2]


def test_a_device_fault_heals_through_force_reset_to_rebuilt(fresh_device: int) -> None:
    records: list[dict[str, Any]] = []
    w = started_worker(records, device=fresh_device)
    error = device_error(w)
    assert w.after_test(error, "t.py::TestHang::test_hang") is True
    assert w.state == "rebuilt" and w.runnable
    assert w.run("vector_add", np.ones(2, np.float32), np.ones(2, np.float32)).tolist() == [2, 2]
    assert lifecycle_path(records) == [
        ("created", "healthy", "init_ok"),
        ("healthy", "poisoned", "device_error"),
        ("poisoned", "force_reset", "start_force_reset"),
        ("force_reset", "rebuilt", "rebuild_ok"),
    ]
    poisoned = records[1]
    assert (poisoned["rc"], poisoned["where"]) == (error.rc, error.where)
    assert poisoned["nodeid"] == "t.py::TestHang::test_hang"
    assert poisoned["worker"] == f"a5sim/host_build_graph/dev{fresh_device}/main"


def test_a_golden_mismatch_on_a_clean_card_leaves_the_worker_healthy(fresh_device: int) -> None:
    records: list[dict[str, Any]] = []
    w = started_worker(records, device=fresh_device)
    assert w.after_test(GoldenMismatch("vector_add differs"), "t.py::test_golden") is False
    assert w.after_test(AssertionError("plain"), "t.py::test_plain") is False
    assert w.state == "healthy"
    assert lifecycle_path(records) == [("created", "healthy", "init_ok")]


def test_a_passing_test_that_left_the_card_dirty_still_poisons(fresh_device: int) -> None:
    records: list[dict[str, Any]] = []
    w = started_worker(records, device=fresh_device)
    device_error(w)  # the test expected the op-timeout and passed
    assert w.after_test(None, "t.py::test_expects_timeout") is True
    assert w.state == "rebuilt"


def test_poisoning_is_decided_by_type_and_probe_never_by_message() -> None:
    assert poisons_worker(DeviceRuntimeError(1, "x", "fine", device=0, platform="a5sim"), True)
    assert not poisons_worker(RuntimeError("rtMalloc failed: 507899"), True)
    assert poisons_worker(None, False)
    assert not poisons_worker(GoldenMismatch("rc 507046"), True)


def test_a_failing_force_reset_is_retried_a_bounded_number_of_times_then_skips(
    fresh_device: int, faults: Callable[[str], object]
) -> None:
    records: list[dict[str, Any]] = []
    w = started_worker(records, device=fresh_device, max_attempts=3)
    faults("force_reset_fail")
    error = device_error(w)
    w.after_test(error, "t.py::test_hang")
    assert w.state == "skipped" and not w.runnable
    triggers = [r["trigger"] for r in records]
    assert triggers == [
        "init_ok",
        "device_error",
        "start_force_reset",
        "reset_retry",
        "reset_retry",
        "give_up",
    ]
    assert records[-1]["where"] == "aclrtResetDeviceForce"
    assert "could not be recovered" in w.skip_reason
    assert "a fresh process will re-run" in w.skip_reason


def test_a_failed_first_init_is_healed_like_any_fault(
    fresh_device: int, faults: Callable[[str], object]
) -> None:
    faults("init_fail")
    records: list[dict[str, Any]] = []
    w = started_worker(records, device=fresh_device, max_attempts=2)
    assert w.state == "skipped"
    assert [r["trigger"] for r in records] == [
        "device_error",
        "start_force_reset",
        "reset_retry",
        "give_up",
    ]
    assert records[0]["rc"] == 62


def test_without_recovery_the_worker_stays_poisoned_and_keeps_running(fresh_device: int) -> None:
    records: list[dict[str, Any]] = []
    w = started_worker(records, device=fresh_device, recovery=False)
    w.after_test(device_error(w), "t.py::test_hang")
    assert w.state == "poisoned" and w.runnable
    with pytest.raises(DeviceRuntimeError, match="unusable"):
        w.run("noop")  # the cascade the machine exists to prevent


def test_shutdown_closes_the_worker_and_reports_a_clean_card(fresh_device: int) -> None:
    records: list[dict[str, Any]] = []
    w = started_worker(records, device=fresh_device)
    assert w.shutdown() == 0
    assert w.state == "closed" and records[-1]["trigger"] == "close"


def test_the_documented_diagram_is_the_one_the_machine_draws() -> None:
    doc = (ROOT / "docs" / "lifecycle.md").read_text()
    fenced = re.search(r"```mermaid\n(.*?)```", doc, re.S)
    assert fenced is not None, "docs/lifecycle.md has no mermaid block"
    assert fenced.group(1) == mermaid(), "docs/lifecycle.md drifted: regenerate it from the machine"


def test_the_lifecycle_command_prints_every_transition() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "simpler", "lifecycle", "--mermaid"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for edge in (
        "healthy --> poisoned: device_error",
        "force_reset --> skipped: give_up",
        "force_reset --> rebuilt: rebuild_ok",
        "force_reset --> force_reset: reset_retry",
    ):
        assert edge in out
