"""One measurement of ``scripts/gpu_check.py``, in a process of its own (the parent runs it).

``python scripts/gpu_check_child.py STEP --platform P --device D [...]``, STEP one of

- ``warm``: load the runner (filling its compiled cache), init, probe, a golden ``vector_add``;
  report the card and the op-timeout;
- ``fault --kernel K``: launch fault kernel K, one more call (a new runner), the in-place heal the
  lifecycle does (force reset, a new runner, probe, golden ``vector_add``, free memory);
- ``spin``: launch ``spin``, then a raw primary-context reset in a thread, waited on for
  ``--spin-wait-s``;
- ``fresh``: only the fresh-process check (``--fresh-check`` does it before any step: this new
  process judges the card the process before it left);
- ``scene --report F --output F --selector S --fault KIND --expected-rc RC``: the scene suite
  through ``simpler run`` with one injected fault, judged from its report file.

The last stdout line is one JSON object; ``step: NAME`` lines on stderr tell the parent how far
a child it had to kill got. On the simulated cards (the CPU rehearsal) a fault kernel is the
simulator's ``launch_fail``, the raw reset is ``force_reset`` and memory is not measured.
Nothing here resets the GPU from outside the process (never ``nvidia-smi -r``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

FAULT_KERNELS = ("illegal_address", "trap", "device_assert", "misaligned")
SIM_FAULT_CONTEXT = "gpu_check-fault"  # the test context a simulated fault kernel fires in
MEMORY_TOLERANCE_BYTES = 64 << 20  # as the runner's probe (cudacard.cpp): rounding, not a leak
GOLDEN_ELEMENTS = 1 << 16
FIRST_TIME = ("passed", "recovered")  # a victim's verdict when the fault never reached it
ROOT = Path(__file__).resolve().parents[1]


def step(name: str) -> None:
    print(f"step: {name}", file=sys.stderr, flush=True)


class Card:
    """The card under test: the real GPU, or a simulated card standing in for one."""

    def __init__(self, platform: str) -> None:
        self.platform, self.sim, self.driver, self.missing = platform, platform != "cuda", None, ""
        if self.sim:
            from simpler.runner import configure_faults

            configure_faults(f"launch_fail@{SIM_FAULT_CONTEXT}", source="gpu_check")
            return
        try:
            from simpler.runner import cuda_driver, cuda_info
        except ImportError as error:
            self.missing = f"simpler's cuda modules cannot be imported ({error})"
        else:
            self.driver, self.problem_of = cuda_info, cuda_driver.driver_problem

    def problem(self) -> str | None:
        return None if self.sim else self.missing or self.problem_of()

    def info(self, device: int) -> dict[str, Any]:
        if not self.sim:
            return dict(self.driver.device_info(device))  # type: ignore[union-attr]
        name = f"{self.platform} simulated card (rehearsal stand-in, not a GPU)"
        return {"name": name, "driver_version": None, "compute_capability": None}

    def launch_fault(self, runner: Any, kernel: str) -> None:
        from simpler.runner import set_test_context

        if not self.sim:
            runner.run(kernel)
            return
        set_test_context(f"{SIM_FAULT_CONTEXT}::{kernel}")  # fires the simulator's launch_fail
        try:
            runner.run("noop")
        finally:
            set_test_context("gpu_check::after-the-fault")

    def memory(self, device: int) -> tuple[int, int] | None:
        if self.sim:
            return None  # the simulator has no device memory to measure
        baseline, free_now = self.driver.memory_info(device)  # type: ignore[union-attr]
        return int(baseline), int(free_now)

    def raw_reset(self, runner: Any, device: int) -> int:
        from simpler.errors import DeviceRuntimeError

        if not self.sim:
            return int(self.driver.raw_primary_ctx_reset(device))  # type: ignore[union-attr]
        try:
            runner.force_reset()
        except DeviceRuntimeError as error:
            return int(error.rc)
        return 0


def describe(error: Any) -> dict[str, Any]:
    """A DeviceRuntimeError as data: rc, CUresult name, the call that surfaced it."""
    message = str(getattr(error, "message", error))
    named = re.search(r"CUDA_(?:ERROR_\w+|SUCCESS)", message)  # the runner names its CUresult
    return {
        "rc": int(error.rc),
        "name": named[0] if named else "",
        "where": str(error.where),
        "message": message[:300],
        "process_must_end": bool(getattr(error, "process_must_end", False)),
    }


def open_initialized(card: Any, device: int) -> tuple[Any, dict[str, Any] | None]:
    """A runner that inited, or None and why not."""
    from simpler.errors import DeviceRuntimeError
    from simpler.runner import open_runner

    runner = open_runner(card.platform, device)
    try:
        runner.init()
    except DeviceRuntimeError as error:
        runner.close()
        return None, {"ok": False, "failed": "init", "detail": describe(error)}
    return runner, None


def check_healthy(card: Any, runner: Any, device: int, *, memory: bool) -> dict[str, Any]:
    """Probe, a golden vector_add, and (after a reset) free memory back at its baseline."""
    import numpy as np

    from simpler.errors import DeviceRuntimeError

    if not runner.probe():
        return {"ok": False, "failed": "probe", "detail": "probe() returned False"}
    rng = np.random.default_rng(GOLDEN_ELEMENTS)
    a, b = rng.standard_normal((2, GOLDEN_ELEMENTS), dtype=np.float32)
    try:
        out = runner.run("vector_add", a, b)
    except DeviceRuntimeError as error:
        return {"ok": False, "failed": "golden", "detail": describe(error)}
    if not np.array_equal(out, a + b):
        return {"ok": False, "failed": "golden", "detail": "vector_add differs from a + b"}
    verdict: dict[str, Any] = {"ok": True, "failed": None, "memory_delta_bytes": None}
    measured = card.memory(device) if memory else None
    if measured is None:
        return verdict
    baseline, free_now = measured  # -1: no baseline yet; a negative free count is -CUresult
    if baseline < 0 or free_now < 0:
        detail = f"memory_info gave baseline {baseline}, free {free_now}"
        return {**verdict, "ok": False, "failed": "memory", "detail": detail}
    verdict["memory_delta_bytes"] = baseline - free_now  # > 0: memory still held
    if baseline - free_now > MEMORY_TOLERANCE_BYTES:
        verdict.update(ok=False, failed="memory", detail=f"{baseline - free_now} bytes held")
    return verdict


def measure_fault(card: Any, runner: Any, device: int, kernel: str, out: dict[str, Any]) -> None:
    from simpler.errors import DeviceRuntimeError

    step(f"fault {kernel}")
    out["launch_rc"], out["sync"] = 0, None
    try:
        card.launch_fault(runner, kernel)
    except DeviceRuntimeError as error:
        fault = describe(error)
        if "launch" in fault["where"].lower():  # cuLaunchKernel itself refused it
            out["launch_rc"], out["launch"] = fault["rc"], fault
        else:  # the launch went through; the bounded sync (cuStreamQuery) saw the fault
            out["sync"] = fault
    step("next call")  # through a new runner: this one refuses calls itself once it has failed
    again, refused = open_initialized(card, device)
    out["next_call"] = refused and refused["detail"]
    if again is not None:
        try:
            again.run("noop")
        except DeviceRuntimeError as error:
            out["next_call"] = describe(error)
        again.close()
    step("in-place reset")
    try:
        runner.force_reset()
    except DeviceRuntimeError as error:
        out["in_place"] = {"ok": False, "failed": "reset", "detail": describe(error)}
        return
    finally:
        runner.close()
    step("in-place: a new runner")
    rebuilt, refused = open_initialized(card, device)
    if rebuilt is None:
        out["in_place"] = refused
        return
    out["in_place"] = check_healthy(card, rebuilt, device, memory=True)
    rebuilt.close()


def measure_spin(card: Any, runner: Any, device: int, wait_s: float, out: dict[str, Any]) -> None:
    from simpler.errors import DeviceRuntimeError

    step("spin")
    started = time.monotonic()
    try:
        runner.run("spin")
        out["spin"] = None  # the op-timeout never fired: a finding in itself
    except DeviceRuntimeError as error:
        out["spin"] = describe(error)
    out["spin_raised_after_s"] = round(time.monotonic() - started, 3)
    # Said now: if the reset below holds the interpreter too, the parent's kill ends this child.
    print(json.dumps(out, default=str), flush=True)
    step("raw reset during the spin")
    returned: list[Any] = []

    def reset() -> None:
        try:
            returned.append(card.raw_reset(runner, device))
        except Exception as error:  # reported, not raised: the thread has no one to raise to
            returned.append(f"{type(error).__name__}: {error}")

    called = time.monotonic()
    thread = threading.Thread(target=reset, name="gpu-check-reset", daemon=True)
    thread.start()
    thread.join(wait_s)
    now = time.monotonic()
    took, since = (round(now - called, 3), round(now - started, 3)) if returned else (None, None)
    out["reset"] = {"returned": bool(returned), "result": returned[0] if returned else None}
    out["reset"].update(seconds=took, since_spin_launch_s=since, waited_s=wait_s)


def measure(card: Any, args: argparse.Namespace, out: dict[str, Any]) -> None:
    """One runner for the whole child: its init sets the memory baseline the heal is held to."""
    step("open and init")
    runner, refused = open_initialized(card, args.device)
    if args.fresh_check or args.step == "fresh":
        step("fresh-check")
        out["fresh"] = refused or check_healthy(card, runner, args.device, memory=False)
    if runner is None:
        out["not_launched"] = f"init failed: {refused}"
        return
    out["runner_origin"] = runner_origin(runner)
    if args.step == "fresh" or not out.get("fresh", {}).get("ok", True):
        if args.step != "fresh":
            out["not_launched"] = "the card was not clean when this process started"
        runner.close()
    elif args.step == "fault":
        measure_fault(card, runner, args.device, args.kernel or FAULT_KERNELS[0], out)
    else:
        measure_spin(card, runner, args.device, args.spin_wait_s, out)


def runner_origin(runner: Any) -> str:
    # "cached-library", "built-library", "jit": the proof that a child loaded a compiled cache.
    return str(getattr(runner, "origin", "unknown"))


def warm(card: Any, device: int, out: dict[str, Any]) -> None:
    from simpler.runner import op_timeout_ms

    step("warm: load and init")
    out["op_timeout_ms"] = op_timeout_ms()
    started = time.monotonic()
    runner, refused = open_initialized(card, device)
    out["load_and_init_s"] = round(time.monotonic() - started, 3)
    out["device"] = card.info(device)
    out["clean_at_start"] = refused
    if runner is not None:
        out["runner_origin"] = runner_origin(runner)
        out["clean_at_start"] = check_healthy(card, runner, device, memory=False)
        runner.close()


def scene(args: argparse.Namespace, out: dict[str, Any]) -> None:
    """The scene suite with one injected fault; judged from its report, not its exit code."""
    report = Path(args.report)
    report.unlink(missing_ok=True)
    argv = [sys.executable, "-m", "simpler", "run", "--platform", args.platform]
    argv += ["--device", str(args.device), "--phases", "l2,retry,report", "--report", str(report)]
    argv += ["--", "tests/st", "-m", "not device_count"]  # one device: no multi-device jobs
    argv += ["--simpler-sim-fault", f"{args.fault}@{args.selector}"]
    out["command"] = shlex.join(["simpler", *argv[3:]])
    step("simpler run")
    started = time.monotonic()
    ran = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    out["seconds_run"] = round(time.monotonic() - started, 1)
    Path(args.output).write_text(ran.stdout + ran.stderr)
    out["exit_code"], lines = ran.returncode, ran.stderr.strip().splitlines()
    if args.driver_problem:  # the rehearsal: the CLI must refuse cuda in one line, exit 2
        out["printed"] = lines[-1] if lines else ""
        out["expectations"] = [
            expect("exit code 2 without a driver", ran.returncode == 2, f"exit {ran.returncode}"),
            expect("one line on stderr", len(lines) == 1, f"{len(lines)}"),
            expect("it names the missing driver", "NVIDIA driver" in out["printed"], "printed"),
        ]
        return
    judge_scene(args, ran.stdout, report, out)


def judge_scene(args: argparse.Namespace, stdout: str, report: Path, out: dict[str, Any]) -> None:
    from simpler.contract import OUTCOME_ORDER
    from simpler.report import read
    from simpler.reporting.records import from_dict
    from simpler.reporting.verdicts import decide_verdicts

    records = read(report) if report.exists() else []
    verdicts = decide_verdicts([from_dict(r) for r in records])
    outcomes = {nodeid: v.outcome for nodeid, v in verdicts.items()}
    pattern = r"collected (\d+) items?(?: / (\d+) deselected)?(?: / (\d+) selected)?"
    found = re.search(pattern, stdout)  # the l2 session's own count
    collected = int(found[3] or int(found[1]) - int(found[2] or 0)) if found else -1
    real = [n for n, o in outcomes.items() if o in OUTCOME_ORDER and o != "poison_skipped"]
    matching = sorted(n for n in outcomes if args.selector in n)
    trigger = matching[0] if len(matching) == 1 else ""
    l2 = [r for r in records if r.get("phase") == "l2" and r["type"] in ("test", "poison_skip")]
    first = next((r for r in l2 if r["type"] == "test" and r["nodeid"] == trigger), {})
    after = l2[l2.index(first) + 1 :] if first else []
    # The victims: every later test on the trigger's card (on a GPU, runtimes share a context).
    device = first.get("device")
    victims = sorted({r["nodeid"] for r in after if r.get("device", device) == device} - {trigger})
    failing = sorted(n for n, v in verdicts.items() if not v.green)
    summary = stdout.rsplit("simpler summary:", 1)[-1] if "simpler summary:" in stdout else ""
    named = re.findall(r"^\d+\) (\S+?): ", summary, re.MULTILINE)
    victim_outcomes = {n: outcomes.get(n, "no verdict") for n in victims}
    out.update(counts=dict(Counter(outcomes.values())), collected=collected, trigger=trigger)
    out.update(trigger_rc=first.get("rc"), trigger_where=first.get("where"), failing=failing)
    out.update(victims=victim_outcomes, named_in_summary=named)
    passed = [o in FIRST_TIME for o in victim_outcomes.values()]  # never failed
    cascaded = "".join(f"; {n}: {o}" for n, o in victim_outcomes.items() if o not in FIRST_TIME)
    checks = [
        ("exit code 1", out["exit_code"] == 1, f"exit {out['exit_code']}"),
        (
            "every collected test has a real verdict",
            collected == len(outcomes) == len(real) > 0,
            f"{len(real)} real verdicts, {len(outcomes)} tests, {collected} collected",
        ),
        ("the selector names one test", len(matching) == 1, f"{len(matching)} match"),
        (
            f"the injected fault failed the trigger (rc {args.expected_rc})",
            first.get("rc") == args.expected_rc,
            f"rc {first.get('rc')} at {first.get('where')}",
        ),
        ("the trigger is the only failure", failing == [trigger] != [""], ", ".join(failing)),
        ("the summary names only the trigger", named == [trigger] != [""], ", ".join(named)),
        (
            "the victims passed",
            bool(passed) and all(passed),
            f"{sum(passed)}/{len(passed)}{cascaded}",
        ),
    ]
    out["expectations"] = [expect(*check) for check in checks]


def expect(name: str, met: bool, detail: str) -> dict[str, Any]:
    return {"name": name, "met": bool(met), "detail": detail or "none"}


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="one gpu_check measurement (internal)")
    parser.add_argument("step", choices=("warm", "fault", "spin", "fresh", "scene"))
    parser.add_argument("--platform", default="cuda")
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--kernel", choices=FAULT_KERNELS)
    parser.add_argument("--fresh-check", action="store_true")
    parser.add_argument("--spin-wait-s", type=float, default=6.0)
    for name in ("--report", "--output", "--selector", "--fault", "--driver-problem"):
        parser.add_argument(name, default="")
    parser.add_argument("--expected-rc", type=int, default=0)
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse(argv)
    started = time.monotonic()
    out: dict[str, Any] = {"gpu_check_child": args.step, "kernel": args.kernel}
    try:
        if args.step == "scene":
            scene(args, out)
        else:
            card = Card(args.platform)
            problem = card.problem()
            if problem:
                out["driver_problem"] = problem
            elif args.step == "warm":
                warm(card, args.device, out)
            else:
                measure(card, args, out)
    except Exception as error:  # a measurement, not a crash: the parent tabulates it
        out["error"] = f"{type(error).__name__}: {error}"[:500]
    out["seconds"] = round(time.monotonic() - started, 3)
    print(json.dumps(out, default=str), flush=True)
    sys.stderr.flush()
    if args.step == "spin":
        os._exit(0)  # the reset thread may still sit in the driver: leave without joining it
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
