"""The chaos matrix: every fault, on both sims, several times, each through ``simpler run``.

For every run it checks that nothing cascaded (the victims after the fault got
their own green verdict), that every failure is named in the summary, that no
report record was lost or torn, that no process outlived the run, and that the
exit code is the documented one and the one its verdict line says. It prints the
table and the totals, renders a timeline of the runs, and exits 1 on any miss.

    nox -s chaos                      # the whole matrix, 5 runs per cell
    nox -s chaos -- --repeat 1 --only hang --platform a5sim
    nox -s chaos -- --only history    # the history's cells only (chaos_history.py, _server.py)
    nox -s chaos -- --only fleet      # a planned matrix's cells only (chaos_fleet.py)
    nox -s chaos -- --only coverage   # simpler run --cov's cells only (chaos_coverage.py)
    nox -s chaos -- --only isolation  # deadline, signals, --isolate (chaos_isolation.py)
    nox -s chaos -- --only slots      # -j above the device count (chaos_slots.py)
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from chaos_coverage import coverage_cells
from chaos_fleet import fleet_cells
from chaos_history import history_cells
from chaos_isolation import isolation_cells
from chaos_processes import no_leftovers, signal_mid_resource_phase
from chaos_report_file import concurrent_appends, print_table, render_timeline
from chaos_slots import slots_cells
from chaos_test_quarantine import QUARANTINE_SCENARIOS, refused_checks, write_quarantine

from simpler import report
from simpler.reporting.records import from_dict
from simpler.reporting.summary import summarize

ROOT = Path(__file__).resolve().parents[1]
SUITE = "scripts/chaos_suite"
L2_FILE = f"{SUITE}/test_chaos_l2.py"
RESOURCE_FILE = f"{SUITE}/test_chaos_resource.py"
TRIGGER = f"{L2_FILE}::TestTrigger::test_launch"
CRASHER = f"{L2_FILE}::TestWorkerCrash::test_crash"
VICTIMS = [
    f"{L2_FILE}::TestVictimA::test_add",
    f"{L2_FILE}::TestVictimB::test_matmul",
    f"{L2_FILE}::TestVictimC::test_noop",
]
RESOURCE_TESTS = [
    f"{RESOURCE_FILE}::test_child_on_its_device",
    f"{RESOURCE_FILE}::test_child_fault",
]
ALL_TESTS = [TRIGGER, *VICTIMS, CRASHER, *RESOURCE_TESTS]
GREEN = {"passed", "recovered", "flaky", "skipped"}
CHECKS = ("no cascade", "failures named", "no record lost", "no leftovers", "exit code")


@dataclass(frozen=True)
class Scenario:
    name: str
    faults: tuple[str, ...] = ()  # --simpler-sim-fault values
    child: str = ""  # CHAOS_CHILD for the Resource suite
    run_args: tuple[str, ...] = ()
    pytest_args: tuple[str, ...] = ()  # after --, besides the suite and the faults
    env: tuple[tuple[str, str], ...] = ()
    expected_rc: int = 0
    victims_green: bool = True
    signal: signal.Signals | None = None  # sent to the orchestrator mid-run
    split: bool = False  # each phase a `simpler run` of its own, then `simpler report`
    absent: tuple[str, ...] = ()  # node ids the scenario deselects: they must have no verdict
    faulting: tuple[str, ...] = ()  # victims that fault themselves: red is their own verdict
    recovered: tuple[str, ...] = ()  # victims that must be re-run fresh, never meet the fault
    says: str = ""  # what the verdict line (the last line printed) must contain
    aliases: tuple[str, ...] = ()  # former names, which --only still matches
    prints: str = ""  # what the output must contain somewhere
    quarantine: str = ""  # a test quarantine file's text, passed as --quarantine


SCENARIOS = [
    Scenario("hang", faults=("hang@TestTrigger",), expected_rc=1),
    Scenario("launch_fail", faults=("launch_fail@TestTrigger#1",)),
    # Every init fails, in the fresh processes too: all tests fail, each with its own verdict.
    Scenario("init_fail", faults=("init_fail",), expected_rc=1, victims_green=False),
    Scenario("drain_false_negative", faults=("hang@TestTrigger#1", "drain_false_negative")),
    Scenario("force_reset_fail", faults=("hang@TestTrigger#1", "force_reset_fail")),
    # An op nothing in the process can stop: its xdist worker ends, a fresh one takes the queue.
    Scenario("stuck op ends the process", faults=("stuck@TestTrigger#1",)),
    Scenario("child SIGSEGV", child="segv", expected_rc=1),
    Scenario("child SIGKILL", child="kill", expected_rc=1),
    Scenario(
        "child hung past timeout", child="hang", run_args=("--job-timeout", "3"), expected_rc=1
    ),
    Scenario("SIGTERM to orchestrator", child="slow", expected_rc=143, signal=signal.SIGTERM),
    Scenario("SIGKILL to orchestrator", child="slow", expected_rc=1, signal=signal.SIGKILL),
    Scenario(
        "SIGINT to orchestrator",
        child="slow",
        expected_rc=130,
        signal=signal.SIGINT,
        says="(interrupted by SIGINT)",
    ),
    # Every test skips: never green-looking, and red when the run asks for it.
    Scenario(
        "all skipped",
        env=(("CHAOS_SKIP_ALL", "1"),),
        run_args=("--fail-if-nothing-ran",),
        expected_rc=1,
        says="nothing ran: 7 of 7 skipped",
    ),
    Scenario("all skipped, no flag", env=(("CHAOS_SKIP_ALL", "1"),), says="nothing ran"),
    # The phases as separate CI sessions: the same verdicts and exit code as one run.
    Scenario("split sessions", faults=("hang@TestTrigger",), expected_rc=1, split=True),
    # L2 retires a card: the two-card Resource test fails with a reason, nothing crashes.
    Scenario(
        "retired card, two-card job",
        aliases=("quarantine, two-card job",),
        faults=("hang@TestTrigger#1", "force_reset_fail"),
        env=(("CHAOS_TWO_CARDS", "1"),),
        expected_rc=1,
    ),
    # A victim faults again inside the retry: only it fails, the ones behind it recover.
    Scenario(
        "second fault in retry",
        faults=("hang@TestTrigger#1", "hang@TestVictimA#2", "force_reset_fail"),
        expected_rc=1,
        faulting=(VICTIMS[0],),
    ),
    # Flags users type, forwarded to every kind of process.
    Scenario(
        "flags: --deselect, -k",
        faults=("hang@TestTrigger#1", "force_reset_fail"),
        pytest_args=("--deselect", f"{L2_FILE}::TestVictimC::test_noop", "-k", "not nothing"),
        absent=(f"{L2_FILE}::TestVictimC::test_noop",),
    ),
    Scenario(
        "flags: -n 2, --dist, -o",
        faults=("hang@TestTrigger#1",),
        run_args=("-j", "2"),
        pytest_args=("-n", "2", "--dist", "loadfile", "-o", "console_output_style=classic"),
    ),
    # An xdist worker dies under a test: it is named, retried fresh, and nothing else is lost.
    Scenario("L2 worker crash", env=(("CHAOS_L2", "crash"),), run_args=("-j", "2")),
    # Two runtimes on one device context that holds one: each retires the other's worker,
    # a fault in the first runtime heals, and nothing is lost between the switches.
    Scenario(
        "runtimes retired per device",
        faults=("hang@TestTrigger#1",),
        env=(("CHAOS_RUNTIMES", "2"),),
        pytest_args=("-o", "simpler_one_runtime_per_device=true"),
    ),
    # A fault under one runtime, a reset that does not take, and another runtime's worker
    # already open on the same card: it must not run its next test there (a flaky verdict
    # would be the cascade), but probe, give up, and let a fresh process re-run it.
    Scenario(
        "second runtime on a card left dirty",
        faults=("hang@TestVictimA#1", "force_reset_fail"),
        env=(("CHAOS_RUNTIMES", "neighbour"),),
        faulting=(VICTIMS[0],),
        recovered=(VICTIMS[1],),
    ),
    # A Resource child leaves a detached grandchild behind: the run reaps it.
    Scenario("detached grandchild", child="detach"),
    # A test quarantine: the quarantined trigger still runs; expired, it gates; broken, stops.
    *(Scenario(**spec) for spec in QUARANTINE_SCENARIOS),
]


@dataclass
class Outcome:
    scenario: Scenario
    platform: str
    checks: dict[str, bool] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    report: Path | None = None

    @property
    def ok(self) -> bool:
        return all(self.checks.values())


def run_once(scenario: Scenario, platform: str, workdir: Path) -> Outcome:
    run_id = f"chaos-{secrets.token_hex(4)}"
    report_file = workdir / f"{run_id}.jsonl"
    env = {
        **os.environ,
        "SIMPLER_RUN_ID": run_id,
        "SIMPLER_OP_TIMEOUT_MS": "150",
        "SIMPLER_LOCK_DIR": str(workdir / "locks"),
        "CHAOS_CHILD": scenario.child,
        **dict(scenario.env),
    }
    env.pop("SIMPLER_SIM_FAULTS", None)
    argv = [
        sys.executable,
        "-m",
        "simpler",
        "run",
        "--platform",
        platform,
        "--device",
        "0-1",
        "-j",
        "1",
        "--report",
        str(report_file),
        *scenario.run_args,
        "--",
        SUITE,
        *scenario.pytest_args,
    ]
    for fault in scenario.faults:
        argv += ["--simpler-sim-fault", fault]
    if scenario.quarantine:
        quarantine = write_quarantine(workdir, run_id, scenario.quarantine)
        argv[argv.index("--") : argv.index("--")] = ["--quarantine", str(quarantine)]
    if scenario.split:
        return _split_sessions(scenario, platform, argv, env, report_file, run_id)
    orchestrator = subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    if scenario.signal is not None:
        signal_mid_resource_phase(orchestrator, report_file, scenario.signal)
    printed, _ = orchestrator.communicate(timeout=600)
    outcome = Outcome(scenario, platform, report=report_file)
    rc = orchestrator.returncode
    if scenario.signal == signal.SIGKILL:
        # The orchestrator is gone: what finished must still be readable and said incomplete.
        after = subprocess.run(
            [sys.executable, "-m", "simpler", "report", "--file", str(report_file)],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        printed, rc = after.stdout, after.returncode
        outcome.checks["exit code"] = rc == 1 and "INCOMPLETE" in printed
    else:
        outcome.checks["exit code"] = rc == scenario.expected_rc
    if not outcome.checks["exit code"]:
        outcome.notes.append(f"exit {rc}, expected {scenario.expected_rc}")
    if scenario.quarantine and scenario.expected_rc == 2:  # refused: no verdict line, no report
        checks, note = refused_checks(printed, report_file, scenario.says)
        checks["exit code"] = checks["exit code"] and outcome.checks["exit code"]
        outcome.checks.update(checks)
        outcome.notes += [note] if note else []
        outcome.report = report_file if report_file.exists() else None  # none to draw
        outcome.checks["no leftovers"] = no_leftovers(run_id, outcome.notes)
        return outcome
    _check_verdict_line(outcome, printed, rc)
    _check_report(outcome, report_file, printed)
    outcome.checks["no leftovers"] = no_leftovers(run_id, outcome.notes)
    return outcome


def _check_verdict_line(outcome: Outcome, printed: str, rc: int) -> None:
    """The last line is the verdict; its exit code is the process's, and it says what it must."""
    lines = printed.rstrip("\n").splitlines()
    last = lines[-1] if lines else ""
    said = re.search(r" -> exit (\d+)", last)
    says, prints = outcome.scenario.says, outcome.scenario.prints
    if said is None or int(said.group(1)) != rc or says not in last or prints not in printed:
        outcome.checks["exit code"] = False
        outcome.notes.append(f"verdict line {last[-90:]!r} for exit {rc}")


def _split_sessions(
    scenario: Scenario,
    platform: str,
    argv: list[str],
    env: dict[str, str],
    report_file: Path,
    run_id: str,
) -> Outcome:
    """Each phase in its own process, as a CI matrix runs them; the run id is the file's."""
    env = {k: v for k, v in env.items() if k != "SIMPLER_RUN_ID"}
    cut = argv.index("--")
    for phase in ("l2", "resource", "retry"):
        session = [*argv[:cut], "--phases", phase, *argv[cut:]]
        subprocess.run(session, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    final = subprocess.run(
        [sys.executable, "-m", "simpler", "report", "--file", str(report_file)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    outcome = Outcome(scenario, platform, report=report_file)
    runs = {r.get("run") for r in report.read(report_file)}
    outcome.checks["exit code"] = final.returncode == scenario.expected_rc and len(runs) == 1
    if not outcome.checks["exit code"]:
        outcome.notes.append(f"exit {final.returncode} over {len(runs)} run id(s)")
    _check_verdict_line(outcome, final.stdout, final.returncode)
    _check_report(outcome, report_file, final.stdout)
    outcome.checks["no leftovers"] = no_leftovers(run_id, outcome.notes)
    return outcome


def _check_report(outcome: Outcome, report_file: Path, printed: str) -> None:
    try:
        contents = report.read_contents(report_file)
    except report.ReportUnreadable as error:
        # The run left no report at all: every check that reads it is a miss, named as such.
        outcome.notes.append(f"{error}; output: {printed.strip().splitlines()[-1:]}")
        for check in ("no record lost", "no cascade", "failures named"):
            outcome.checks[check] = False
        return
    summary = summarize([from_dict(r) for r in contents.records])
    verdicts = summary.verdicts
    interrupted = outcome.scenario.signal is not None
    expected = [*ALL_TESTS[:4]] if interrupted else ALL_TESTS  # L2 ended before the signal
    # A child that died before its test's record still has its verdict: the child record.
    children = {r.get("nodeid") for r in contents.records if r.get("type") == "child"}
    expected = [n for n in expected if n not in outcome.scenario.absent]
    missing = [n for n in expected if n not in verdicts and n not in children]
    missing += [n for n in outcome.scenario.absent if n in verdicts]  # deselected, yet ran
    outcome.checks["no record lost"] = contents.malformed == 0 and not missing
    if missing or contents.malformed:
        outcome.notes.append(
            f"{len(missing)} verdict(s) missing, {contents.malformed} torn line(s)"
        )
    victims = [v for v in VICTIMS if v not in outcome.scenario.absent + outcome.scenario.faulting]
    if outcome.scenario.victims_green:
        cascaded = [
            v for v in victims if verdicts.get(v) is None or verdicts[v].outcome not in GREEN
        ]
    else:
        cascaded = [v for v in victims if v not in verdicts]  # own verdict, whatever it is
    cascaded += [
        v
        for v in outcome.scenario.recovered
        if v not in cascaded and (v not in verdicts or verdicts[v].outcome != "recovered")
    ]
    outcome.checks["no cascade"] = not cascaded
    if cascaded:
        outcome.notes.append(f"cascade into {len(cascaded)} victim(s)")
    unnamed = [f for f in summary.failures if (f.nodeid or "") not in printed]
    outcome.checks["failures named"] = not unnamed
    if unnamed:
        outcome.notes.append(f"{len(unnamed)} failure(s) not named in the summary")


def _mark(passed: bool | None) -> str:
    """A cell's mark: a skipped one (None, it could not run here) is no miss, nor a pass."""
    return "skipped" if passed is None else "ok" if passed else "MISS"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--platform", action="append", choices=("a5sim", "a2a3sim"))
    parser.add_argument("--only", action="append", help="run only the faults whose name has this")
    parser.add_argument("--out", type=Path, default=ROOT / ".simpler" / "chaos")
    args = parser.parse_args()

    args.out.mkdir(parents=True, exist_ok=True)
    scenarios = [
        s
        for s in SCENARIOS
        if not args.only or any(o in name for o in args.only for name in (s.name, *s.aliases))
    ]
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="simpler-chaos-", dir=args.out) as folder:
        workdir = Path(folder)
        for scenario in scenarios:
            for platform in args.platform or ("a5sim", "a2a3sim"):
                for _ in range(args.repeat):
                    outcome = run_once(scenario, platform, workdir)
                    outcomes.append(outcome)
                    mark = "ok" if outcome.ok else "MISS " + "; ".join(outcome.notes)
                    print(f"{scenario.name:26} {platform:8} {mark}", flush=True)
        concurrency_ok, concurrency = concurrent_appends(workdir)
        history = history_cells(workdir) if not args.only or "history" in args.only else []
        history += fleet_cells(workdir) if not args.only or "fleet" in args.only else []
        history += coverage_cells(workdir) if not args.only or "coverage" in args.only else []
        history += isolation_cells(workdir) if not args.only or "isolation" in args.only else []
        history += slots_cells(workdir) if not args.only or "slots" in args.only else []
        print_table(outcomes, CHECKS)
        print(
            f"report file, 16 writers x 2,000 appends: {concurrency}"
            f" -> {'ok' if concurrency_ok else 'MISS'}"
        )
        for name, passed, seen in history:
            print(f"{name:47} {_mark(passed)}  {seen}")
        firsts = {(o.scenario.name, o.platform): o.report for o in reversed(outcomes) if o.report}
        timeline = render_timeline(list(firsts.values())[::-1], args.out)
    missed = sum(not o.ok for o in outcomes) + (not concurrency_ok)
    missed += sum(passed is False for _, passed, _ in history)
    skipped = sum(passed is None for _, passed, _ in history)
    print(f"timeline of the chaos runs: {timeline}")
    print(
        f"chaos: {len(outcomes)} runs, {missed} miss(es)"
        + (f", {skipped} cell(s) skipped" if skipped else "")
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
