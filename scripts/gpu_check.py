"""The device check of a real NVIDIA GPU: what each fault does to it, and what heals it.

On a machine with one NVIDIA GPU, from the repository root, in simpler's environment:

    python scripts/gpu_check.py --out gpu-check      # platform cuda, device 0, < 6 minutes

Per fault kernel (illegal_address, trap, device_assert, misaligned), ``--reps`` repetitions,
each a child process under a kill timer: launch rc, sync rc, whether the next call repeats it,
whether the in-place reset heals (probe, golden ``vector_add``, free memory back at baseline),
whether a fresh process heals (the next child checks the card first). For ``spin``: whether a
primary-context reset during the spin returns or blocks. Then the scene suite (tests/st) with one
injected ``illegal_address``. Writes ``gpu_check.md`` and ``gpu_check.json`` into ``--out``
after every child and prints the markdown; exit 0 when the scene met every expectation, else 1.

``--budget-s`` (default 330) bounds it all: kill timers come from it, and what would not fit is
skipped, and the table says so. A warm-up child first fills the runner's compiled cache.

Rehearsal on a CPU machine: without a driver the same code runs end to end, every child
reports the missing driver and each row says "not measured: <that line>" (exit 0).
``--platform a5sim`` runs every measurement against the simulated card instead.

It never resets the GPU from outside the process: never ``nvidia-smi -r``, no driver reload.
A faulted or hung child is killed with its process tree; the next process checks the card.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import psutil
from gpu_check_child import FAULT_KERNELS

from simpler.base.compat import UTC
from simpler.usage import OneLineParser, UsageError

CHILD = Path(__file__).resolve().with_name("gpu_check_child.py")
ROOT = CHILD.parents[1]
SCENE_SELECTOR = "TestVectorAddOnRingbuffer::test_operand_order"
SCENE_FAULT = {"cuda": ("illegal_address", 700), "sim": ("launch_fail", 207001)}  # and its rc
SCENE_RESERVE_S = 100.0  # held back for the scene suite while the other children run
SCENE_MIN_S = 45.0  # a scene run given less would only be killed
FAULT_CAP_S = 40.0  # the kill timer of one fault child, at most
WARM_CAP_S = 150.0  # the warm-up may compile the runner
FIRST_GUESS_S = 6.0  # a child's duration before one was measured
SLACK_S = 8.0  # writing the files after the last child
SPIN_MS = 4000  # the spin kernel's length (SIMPLER_CUDA_SPIN_MS of the spin children)
SPIN_WAIT_S = SPIN_MS / 1000 + 2.0  # a reset not returned by then counts as blocked
NOT_INHERITED = ("SIMPLER_SIM_FAULTS", "SIMPLER_RUN_ID", "SIMPLER_ATTEMPT")  # an outer run's
POPEN: Any = dict(text=True, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
FAULT_COLUMNS = ["launch rc", "sync rc", "repeats on next call", "in-place reset heals"]
FAULT_COLUMNS += ["memory delta max", "fresh process heals"]
SPIN_COLUMNS = ["spin rc", "reset returned", "reset blocked", "fresh process heals"]
SIM_NOTE = "fault kernels are its launch_fail, the reset during spin is force_reset, memory "
SIM_NOTE += "is not measured: these numbers say nothing about a GPU."


def parse(argv: list[str] | None) -> Any:
    parser = OneLineParser(prog="gpu_check.py", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("gpu-check"), help="folder for the table")
    parser.add_argument("--reps", type=int, default=10, help="repetitions per fault kernel")
    parser.add_argument("--spin-reps", type=int, default=3, help="repetitions of spin")
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--platform", choices=("cuda", "a5sim", "a2a3sim"), default="cuda")
    parser.add_argument("--budget-s", type=float, default=330.0, help="seconds for everything")
    args = parser.parse_args(argv)
    if min(args.reps, args.spin_reps) < 1 or args.device < 0 or not 0 < args.budget_s < 1e6:
        raise UsageError("gpu_check.py: --reps, --spin-reps, --budget-s need > 0, --device >= 0")
    return args


def kill_tree(pid: int) -> None:
    """Kill a child and all it started (a killed GPU process releases its context)."""
    try:
        parent = psutil.Process(pid)
        procs = [*parent.children(recursive=True), parent]
    except psutil.NoSuchProcess:
        procs = []
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
    psutil.wait_procs(procs, timeout=5)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)  # its session: anything that left the tree


def run_child(argv: list[str], timeout_s: float, env: dict[str, str]) -> dict[str, Any]:
    """The child's JSON line, or what is known of a child that left none."""
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, str(CHILD), *argv], cwd=ROOT, env=env, **POPEN)
    killed = False
    try:
        stdout, stderr = proc.communicate(timeout=max(timeout_s, 1.0))
    except subprocess.TimeoutExpired:
        killed = True
        kill_tree(proc.pid)
        try:
            stdout, stderr = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            stdout, stderr = "", "its output pipes stayed open after the kill"
    except BaseException:
        kill_tree(proc.pid)
        raise
    wall = round(time.monotonic() - started, 2)
    for line in reversed((stdout or "").splitlines()):
        at = line.find('{"gpu_check_child"')  # the device's own printf may share the line
        with contextlib.suppress(json.JSONDecodeError):
            if at >= 0:
                return {**json.loads(line[at:]), "wall_s": wall, "killed": killed}
    lines = [ln for ln in (stderr or "").splitlines() if ln.strip()]
    steps = [ln[6:] for ln in lines if ln.startswith("step: ")]
    return {
        "no_result": True,
        "killed": killed,
        "returncode": None if killed else proc.returncode,
        "wall_s": wall,
        "last_step": steps[-1] if steps else "start",
        "stderr_tail": " | ".join(lines[-3:]),
    }


def rc_text(fault: dict[str, Any] | None, none: str) -> str:
    if not fault:
        return none
    name = f" {fault['name']}" if fault.get("name") else ""
    must_end = ", process must end" if fault.get("process_must_end") else ""
    return f"{fault['rc']}{name} at {fault['where']}{must_end}"


def tally(values: list[str]) -> str:
    return "; ".join(f"{v} x{n}" for v, n in Counter(values).most_common()) or "none"


def heal_ratio(checks: list[dict[str, Any]]) -> str:
    """How many of these checks (each ``{"ok", "failed"}``) passed, and what failed the rest."""
    failed = [str(check["failed"]) for check in checks if not check["ok"]]
    why = f" (failed: {tally(failed)})" if failed else ""
    return f"{len(checks) - len(failed)}/{len(checks)}{why}"


def problems(reps: list[dict[str, Any]]) -> list[str]:
    """What kept a repetition from being measured."""
    found = []
    for rep in reps:
        if rep.get("no_result"):
            how = f"exit {rep['returncode']}" if not rep["killed"] else "killed"
            found.append(f"no result ({how}, last step: {rep['last_step']}) {rep['stderr_tail']}")
        found += [f"not launched: {rep['not_launched']}"] if rep.get("not_launched") else []
        found += [f"error: {rep['error']}"] if rep.get("error") else []
    return found


def summarize(kind: str, reps: list[dict[str, Any]], doc: dict[str, Any]) -> dict[str, Any]:
    """One table row: display cells per column, and the numbers a reader of the JSON needs."""
    done = [r for r in reps if ("spin" if kind == "spin" else "launch_rc") in r]
    planned = doc["spin_reps" if kind == "spin" else "reps"]
    row: dict[str, Any] = {"kind": kind, "type": "spin" if kind == "spin" else "fault"}
    row.update(reps=f"{len(done)}/{planned}", reps_measured=len(done), cells={})
    nothing = "the budget left no room" if not reps else "no repetition was measured"
    row["not_measured"] = None if done else doc["not_measured"] or nothing
    row["problems"] = [] if doc["not_measured"] else problems(reps)
    fresh = [r["fresh_after"] for r in done if "fresh_after" in r]
    if kind == "spin":
        spin_end = doc["spin_ms"] / 1000 - 0.25  # a reset back before then did not wait for it
        back = [r["reset"] for r in done if r.get("reset", {}).get("returned")]
        row["reset_seconds"] = [b["seconds"] for b in back]
        killed = [r["wall_s"] for r in done if r["killed"]]
        early = sum(b["since_spin_launch_s"] < spin_end for b in back)
        returned = f"{len(back)}/{len(done)} (rc {tally([str(b['result']) for b in back])}"
        blocked = f"{len(done) - len(back)}/{len(done)} (no return in {SPIN_WAIT_S} s)"
        row["cells"] = {
            "spin rc": tally([rc_text(r["spin"], "no error: no op-timeout") for r in done]),
            "reset returned": f"{returned}; {row['reset_seconds']} s; {early} while the kernel "
            f"ran, {len(back) - early} only once it had ended)",
            "reset blocked": blocked + (f"; children killed after {killed} s" if killed else ""),
            "fresh process heals": heal_ratio(fresh),
        }
        return row
    heals = [r.get("in_place") or {"ok": False, "failed": "unknown"} for r in done]
    deltas = [h["memory_delta_bytes"] for h in heals if h.get("memory_delta_bytes") is not None]
    row["memory_delta_max_bytes"] = delta = max(deltas, key=abs) if deltas else None
    repeats = f"{sum(r['next_call'] is not None for r in done)}/{len(done)}"
    nexts = tally([rc_text(r["next_call"], "passed") for r in done])
    sync = [rc_text(r["sync"], "no error") if r["launch_rc"] == 0 else "not reached" for r in done]
    row["cells"] = {
        "launch rc": tally([rc_text(r.get("launch"), "0 CUDA_SUCCESS") for r in done]),
        "sync rc": tally(sync),
        "repeats on next call": f"{repeats} ({nexts})",
        "in-place reset heals": heal_ratio(heals),
        "memory delta max": "not measured" if delta is None else f"{delta / 2**20:.1f} MiB",
        "fresh process heals": heal_ratio(fresh),
    }
    return row


def table(first: str, rows: list[dict[str, Any]], columns: list[str]) -> list[str]:
    lines = [f"| {first} | reps | {' | '.join(columns)} |", "|---" * (len(columns) + 2) + "|"]
    for row in rows:
        cells = [row["cells"].get(c, "") for c in columns]
        if row["not_measured"]:
            cells = [f"not measured: {row['not_measured']}"] + ["-"] * (len(columns) - 1)
        lines.append(f"| {row['kind']} | {row['reps']} | {' | '.join(cells)} |")
    return lines


def render_markdown(doc: dict[str, Any]) -> str:
    card, clean = doc["card"] or {}, doc["clean_at_start"] or {}
    lines = [f"# GPU check: {card.get('name') or 'no card'}, device {doc['device']}", ""]
    if doc["not_measured"]:
        lines += [f"**Rehearsal: nothing was measured.** {doc['not_measured']}", ""]
    elif doc["platform"] != "cuda":
        lines += [f"**Rehearsal on the simulated card**: {SIM_NOTE}", ""]
    origins = [k for k, n in doc["runner_origins"].items() for _ in range(n)]
    lines += [
        f"- date (UTC): {doc['date_utc']}; platform {doc['platform']}; mode: {doc['mode']}",
        f"- driver version: {card.get('driver_version')}; compute capability: "
        f"{card.get('compute_capability')}; op-timeout: {doc['op_timeout_ms']} ms",
        f"- card clean at start: {'yes' if clean.get('ok') else clean or 'unknown'}",
        f"- runner library loaded from: {tally(origins)}",
        f"- budget {doc['budget_s']:.0f} s, took {doc['elapsed_s']:.0f} s"
        + ("" if doc["complete"] else " (not complete)"),
        *[f"- {note}" for note in doc["skipped"]],
        *[f"- warm-up: {problem}" for problem in problems([doc.get("warm") or {}])],
        "",
    ]
    faults = [r for r in doc["rows"] if r["type"] == "fault"]
    spin = [r for r in doc["rows"] if r["type"] == "spin"]
    lines += [*table("fault kernel", faults, FAULT_COLUMNS), ""]
    spun = "reaped by the op-timeout" if doc["platform"] != "cuda" else f"{doc['spin_ms']} ms"
    lines += [*table(f"kernel ({spun})", spin, SPIN_COLUMNS), ""]
    lines += [f"- {row['kind']}: {p}" for row in doc["rows"] for p in row.get("problems", [])]
    scene = doc["rows"][-1]
    lines += ["", "## Scene suite", "", f"`{scene.get('command', 'not run')}`", ""]
    why = scene.get("not_measured") or scene.get("skipped") or "; ".join(problems([scene]))
    lines += [f"- not measured: {why}"] if why else []
    if "exit_code" in scene:
        lines.append(f"- exit code {scene['exit_code']} after {scene['seconds_run']} s")
        lines += [f"- printed: {scene['printed']}"] if "printed" in scene else []
    if "counts" in scene:
        lines += [
            f"- verdicts: {scene['counts']}; collected: {scene['collected']}",
            f"- trigger: {scene['trigger'] or 'none'} (rc {scene['trigger_rc']} at "
            f"{scene['trigger_where']}); the summary names: {scene['named_in_summary']}",
            f"- victims: {tally(list(scene['victims'].values()))}",
        ]
    lines += ["", "| expectation | met | detail |", "|---|---|---|"]
    for e in scene.get("expectations") or [{"name": "the scene ran", "met": False, "detail": ""}]:
        lines.append(f"| {e['name']} | {'yes' if e['met'] else '**NO**'} | {e['detail']} |")
    return "\n".join(lines) + "\n"


class Check:
    def __init__(self, args: Any) -> None:
        self.args, self.started = args, time.monotonic()
        self.deadline: float = self.started + args.budget_s
        self.scene_reserve = min(SCENE_RESERVE_S, 0.4 * args.budget_s)
        self.durations: dict[str, list[float]] = {"fault": [], "spin": []}
        self.previous: dict[str, Any] | None = None  # the next child checks the card after it
        self.env = {k: v for k, v in os.environ.items() if k not in NOT_INHERITED}
        doc: dict[str, Any] = dict.fromkeys(("not_measured", "op_timeout_ms", "clean_at_start"))
        doc.update(schema=1, tool="scripts/gpu_check.py", mode="gpu", card={}, complete=False)
        doc.update(platform=args.platform, device=args.device, reps=args.reps, scene=None)
        doc.update(spin_reps=args.spin_reps, budget_s=args.budget_s, spin_ms=SPIN_MS, rows=[])
        doc.update(date_utc=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S"), elapsed_s=0.0)
        doc.update(runner_origins={}, skipped=[], reps_raw={k: [] for k in FAULT_KERNELS})
        doc["reps_raw"]["spin"] = []
        self.doc = doc

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def estimate(self, kind: str) -> float:
        seen = self.durations["fault"] + self.durations[kind]
        return 1.25 * max(seen) + 1.0 if seen else FIRST_GUESS_S

    def child(self, step: str, timeout_s: float, *extra: str) -> dict[str, Any]:
        argv = [step, "--platform", self.args.platform, "--device", str(self.args.device), *extra]
        argv += ["--fresh-check"] if self.previous and step not in ("warm", "scene") else []
        env = {**self.env, "SIMPLER_CUDA_SPIN_MS": str(SPIN_MS)} if step == "spin" else self.env
        result = run_child(argv, timeout_s, env)
        fresh = result.pop("fresh", None)
        if self.previous is not None and fresh is not None:
            self.previous["fresh_after"] = fresh  # this new process judges the one before it
        if result.get("runner_origin"):
            origins = self.doc["runner_origins"]
            origins[result["runner_origin"]] = origins.get(result["runner_origin"], 0) + 1
        flags = {"killed": result["killed"], "no result": result.get("no_result")}
        state = next((k for k, on in flags.items() if on), "done")
        state = "driver missing" if result.get("driver_problem") else state
        note = f"{step} {result.get('kernel') or ''}".strip() + f": {state} in {result['wall_s']} s"
        print(f"gpu_check: {note}, {self.left():.0f} s of the budget left", file=sys.stderr)
        return result

    def skip(self, what: str) -> None:
        self.doc["skipped"].append(f"{what}: skipped, {self.left():.0f} s of the budget left")

    def run(self) -> None:
        warm = self.child("warm", min(WARM_CAP_S, self.left() - self.scene_reserve - SLACK_S))
        self.doc.update(warm=warm, card=warm.get("device") or {})
        self.doc.update({key: warm.get(key) for key in ("clean_at_start", "op_timeout_ms")})
        if warm.get("driver_problem"):
            self.doc.update(mode="rehearsal: no driver", not_measured=warm["driver_problem"])
        elif self.args.platform != "cuda":
            self.doc["mode"] = f"rehearsal: simulated card {self.args.platform}"
        self.save()
        spin_reserve = self.args.spin_reps * (self.estimate("spin") + SPIN_WAIT_S + 1)
        # Interleaved, so that a budget too short for all still covers every kernel.
        plan = [kernel for _ in range(self.args.reps) for kernel in FAULT_KERNELS]
        for done, kernel in enumerate(plan):
            # Room for this child that leaves the spins, one last fresh check and the scene theirs.
            room = self.left() - self.scene_reserve - spin_reserve - self.estimate("fault")
            if room < self.estimate("fault"):  # estimates only grow: no later child fits either
                self.skip(f"{len(plan) - done} of {len(plan)} fault repetitions")
                break
            result = self.child("fault", min(FAULT_CAP_S, room), "--kernel", kernel)
            self.record(kernel, "fault", result)
        for rep in range(self.args.spin_reps):
            need, room = self.estimate("spin") + SPIN_WAIT_S, self.left() - self.scene_reserve
            if room < need:
                self.skip(f"{self.args.spin_reps - rep} of {self.args.spin_reps} spin repetitions")
                break
            wait = ("--spin-wait-s", str(SPIN_WAIT_S))  # a reset holding the GIL: killed at the cap
            self.record("spin", "spin", self.child("spin", min(room, need + 8.0), *wait))
        if self.left() - self.scene_reserve >= self.estimate("fault"):
            self.child("fresh", min(FAULT_CAP_S, self.left() - self.scene_reserve))
        else:
            self.skip("the last fresh-process check")
        self.scene()
        self.doc["complete"] = True

    def record(self, kind: str, step: str, result: dict[str, Any]) -> None:
        self.doc["reps_raw"][kind].append(result)
        if not result.get("driver_problem") and not result.get("no_result"):
            self.durations[step].append(float(result["wall_s"]))
        self.previous = result
        self.save()

    def scene(self) -> None:
        timeout = self.left() - SLACK_S
        if timeout < SCENE_MIN_S and not self.doc["not_measured"]:
            self.skip("the scene suite")
            self.doc["scene"] = {"skipped": f"{self.left():.0f} s of the budget left"}
            return
        fault, rc = SCENE_FAULT.get(self.args.platform, SCENE_FAULT["sim"])
        out = self.args.out.resolve()
        argv = ["--report", str(out / "scene-report.jsonl"), "--selector", SCENE_SELECTOR]
        argv += ["--output", str(out / "scene-output.txt"), "--fault", fault]
        argv += ["--expected-rc", str(rc), "--driver-problem", self.doc["not_measured"] or ""]
        self.doc["scene"] = self.child("scene", max(timeout, 5.0), *argv)

    def save(self) -> None:
        doc, raw = self.doc, self.doc["reps_raw"]
        doc["elapsed_s"] = round(time.monotonic() - self.started, 1)
        doc["rows"] = [summarize(k, raw[k], doc) for k in (*FAULT_KERNELS, "spin")]
        scene = doc["scene"] or {"not_measured": doc["not_measured"] or "not run yet"}
        doc["rows"].append({"not_measured": doc["not_measured"], **scene, "kind": "scene"})
        doc["rows"][-1]["type"] = "scene"
        (self.args.out / "gpu_check.json").write_text(json.dumps(doc, indent=1) + "\n")
        (self.args.out / "gpu_check.md").write_text(render_markdown(doc))


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse(argv)
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "gpu_check.json").touch()
    except UsageError as error:
        print(error, file=sys.stderr)
        return 2
    except OSError as error:
        print(f"gpu_check.py: cannot write to --out {args.out}: {error}", file=sys.stderr)
        return 3
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM unwinds like Ctrl-C
    check = Check(args)
    try:
        check.run()
    except KeyboardInterrupt:
        check.doc["skipped"].append("interrupted: the rest was not run")
        check.save()
        print("gpu_check.py: interrupted; what was measured is in the files", file=sys.stderr)
        return 130
    check.save()
    print(render_markdown(check.doc), end="")
    if check.doc["not_measured"]:
        print(f"gpu_check.py: REHEARSAL, nothing was measured: {check.doc['not_measured']}")
    expectations = (check.doc["scene"] or {}).get("expectations") or [{"met": False}]
    return 0 if all(e["met"] for e in expectations) else 1


if __name__ == "__main__":
    sys.exit(main())
