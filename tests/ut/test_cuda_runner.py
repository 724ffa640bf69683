"""The CUDA runner on a fake driver (tests/fake_cuda): its kernels, its faults, its recovery.

Each test runs in a process of its own: the driver a process loads, and a sticky error,
are the process's. The fake runs the kernels of kernels.cu on the host and fails as the
driver documents; scripts/gpu_check.py measures what a real card does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

RC_NAMES = {
    "illegal_address": (700, "CUDA_ERROR_ILLEGAL_ADDRESS"),
    "trap": (719, "CUDA_ERROR_LAUNCH_FAILED"),
    "device_assert": (710, "CUDA_ERROR_ASSERT"),
    "misaligned": (716, "CUDA_ERROR_MISALIGNED_ADDRESS"),
}
# The children import the unit tests' worker builder (pooled_workers.py) from here.
UT = str(Path(__file__).resolve().parent)


def _child(driver: str, body: str, **env: str) -> Any:
    """Run ``body`` (it prints one JSON line last) in a fresh process on the fake driver."""
    code = "import json, numpy as np\nfrom simpler import runner\n" + textwrap.dedent(body)
    path = os.pathsep.join(p for p in (UT, os.environ.get("PYTHONPATH")) if p)
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "PYTHONPATH": path,
            "SIMPLER_CUDA_DRIVER": driver,
            "SIMPLER_OP_TIMEOUT_MS": "300",
            **env,
        },
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_the_kernels_match_their_numpy_goldens(fake_cuda_driver: str) -> None:
    result = _child(
        fake_cuda_driver,
        """
        r = runner.open_runner("cuda", 0); r.init()
        g = np.random.default_rng(7)
        a = g.standard_normal((3, 5), dtype=np.float32)
        b = g.standard_normal((5, 4), dtype=np.float32)
        x = g.standard_normal((6, 9), dtype=np.float32)
        i = np.arange(10, dtype=np.int64)

        def softmax_matches(got, x):
            # Element by element against a float64 softmax rounded once, to an ulp: row sums
            # of 1 would pass with wrong elements. A mismatch raises, numpy's report in stderr.
            e = np.exp(x.astype(np.float64) - x.max(axis=-1, keepdims=True))
            golden = (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)
            np.testing.assert_allclose(got, golden, rtol=2**-23, atol=0)
            return True

        checks = {
            "add": bool(np.array_equal(r.run("vector_add", a, a), a + a)),
            "add_i64": bool(np.array_equal(r.run("vector_add", i, i), i + i)),
            "scale": bool(np.array_equal(r.run("scale", i, 3), i * 3)),
            "matmul": bool(np.allclose(r.run("matmul", a, b), a.astype(float) @ b, atol=1e-5)),
            "softmax": softmax_matches(r.run("softmax", x), x),
            "noop": r.run("noop") is None,
            "probe": r.probe(),
            "finalize": r.finalize(),
        }
        print(json.dumps(checks))
        """,
    )
    assert result == {
        "add": True,
        "add_i64": True,
        "scale": True,
        "matmul": True,
        "softmax": True,
        "noop": True,
        "probe": True,
        "finalize": 0,
    }


@pytest.mark.parametrize("kind", sorted(RC_NAMES))
def test_an_injected_fault_kernel_replaces_the_first_launch_and_sticks(
    fake_cuda_driver: str, kind: str
) -> None:
    result = _child(
        fake_cuda_driver,
        f"""
        from simpler.errors import DeviceRuntimeError
        runner.configure_faults("{kind}@test_x")
        runner.set_test_context("t.py::test_x", 1)
        r = runner.open_runner("cuda", 0); r.init()
        a = np.ones(8, dtype=np.float32)
        try:
            r.run("vector_add", a, a)
        except DeviceRuntimeError as e:
            first = [e.rc, e.where, e.message, e.process_must_end]
        # The same card from a new runner: the context is still sticky-errored.
        again = runner.open_runner("cuda", 0)
        try:
            again.init(); again.run("noop"); repeat = None
        except DeviceRuntimeError as e:
            repeat = e.rc
        print(json.dumps({{"first": first, "repeat": repeat, "unusable": r.unusable}}))
        """,
    )
    rc, name = RC_NAMES[kind]
    assert result["first"][:2] == [rc, "cuStreamQuery"]
    assert result["first"][2].startswith(f"{name}: ") and f"injected {kind}" in result["first"][2]
    assert result["first"][3] is False
    assert result["repeat"] == rc and result["unusable"] is True


_LIFECYCLE = """
    from pooled_workers import launch_error, started_worker
    runner.configure_faults("illegal_address@test_x")
    runner.set_test_context("t.py::test_x", 1)
    w = started_worker([], platform="cuda", runtime="default")
    w.after_test(launch_error(w), "t.py::test_x")
    runner.set_test_context("t.py::test_y", 1)
    a = np.arange(4, dtype=np.float32)
    after = w.run("vector_add", a, a).tolist() if w.runnable else None
    w.shutdown()
    print(json.dumps({"path": w.path, "after": after, "skip": w.skip_reason}))
"""


def test_a_reset_that_heals_rebuilds_the_worker_in_place(fake_cuda_driver: str) -> None:
    result = _child(fake_cuda_driver, _LIFECYCLE, FAKE_CUDA_RESET_HEALS="1")
    assert result["path"] == ["created", "healthy", "poisoned", "force_reset", "rebuilt", "closed"]
    assert result["after"] == [0.0, 2.0, 4.0, 6.0]


def test_a_reset_that_does_not_heal_gives_up_for_a_fresh_process(fake_cuda_driver: str) -> None:
    result = _child(fake_cuda_driver, _LIFECYCLE, FAKE_CUDA_RESET_HEALS="0")
    assert result["path"][:4] == ["created", "healthy", "poisoned", "force_reset"]
    assert result["path"][-2:] == ["skipped", "closed"]
    assert result["after"] is None and "a fresh process will re-run" in result["skip"]


def test_a_kernel_past_the_op_timeout_ends_the_process_without_a_reset(
    fake_cuda_driver: str,
) -> None:
    result = _child(
        fake_cuda_driver,
        """
        from pooled_workers import launch_error, started_worker
        runner.configure_faults("hang@test_x")
        runner.set_test_context("t.py::test_x", 1)
        w = started_worker([], platform="cuda", runtime="default")
        error = launch_error(w)
        w.after_test(error, "t.py::test_x")
        rc = w.shutdown()  # must return at once: nothing may wait on the running kernel
        print(json.dumps({"rc": error.rc, "where": error.where, "must_end": error.process_must_end,
                          "message": error.message, "path": w.path, "flag": w.must_end_process,
                          "shutdown": rc}))
        """,
        SIMPLER_CUDA_SPIN_MS="60000",
    )
    assert (result["rc"], result["where"], result["must_end"]) == (600, "cuStreamQuery", True)
    assert "the process holding device 0's context must end" in result["message"]
    assert result["path"] == ["created", "healthy", "poisoned", "skipped", "closed"]
    assert result["flag"] is True and result["shutdown"] == 600
