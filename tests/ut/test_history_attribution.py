"""Why each failed attempt failed: the test, the device or the infrastructure.

The records are built as simpler writes them (the fields of real reports of the hang, crash,
quarantine and session-timeout scenarios), in file order with rising times.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from simpler.history.attribution import DEVICE, INFRA, TEST, Attempt, attribute

PLATFORM_WORKER = "a5sim/host_build_graph/dev{device}/{process}"
TRIGGER = "tests/it/scenarios/scenario_hang_victims.py::TestTrigger::test_launch"
VICTIMS = [f"tests/it/scenarios/scenario_hang_victims.py::TestVictim{i}::test_noop" for i in (1, 2)]
HANG = (
    "DeviceRuntimeError: a5sim device 0: rc 507046 at aclrtSynchronizeStreamWithTimeout: "
    "op 'spin' exceeded the op-timeout of 150 ms and was reaped"
)
UNUSABLE = "DeviceRuntimeError: a5sim device 0: rc -1 at run: runner is unusable after rc 507046"
WHERE_HUNG = "aclrtSynchronizeStreamWithTimeout"
GAVE_UP = "worker a5sim/host_build_graph/dev0/main could not be recovered: rc 507046"


def worker_key(device: int = 0, process: str = "main") -> str:
    return PLATFORM_WORKER.format(device=device, process=process)


class Run:
    """One run's records, as the orchestrator, the plugin and the xdist controller write them."""

    def __init__(self, run: str = "20261203T232528-26e1dd", start: float = 1_796_340_328.0):
        self.run = run
        self.clock = start
        self.records: list[dict[str, Any]] = []

    def add(self, phase: str, kind: str, **fields: Any) -> dict[str, Any]:
        self.clock += 0.01
        base = {"schema": 1, "run": self.run, "ts": round(self.clock, 6), "phase": phase}
        record = {**base, "type": kind, **fields}
        self.records.append(record)
        return record

    def start(self, phase: str, shard: str | None = None) -> Run:
        self.add(phase, "phase", event="start", shard=shard)
        return self

    def end(self, phase: str, returncode: int = 0, **fields: Any) -> Run:
        fields = {"counts": {}, "returncode": returncode, "duration_s": 1.0, "interrupted": None,
                  "error": None, **fields}  # fmt: skip
        self.add(phase, "phase", event="end", **fields)
        return self

    def lifecycle(self, phase: str, worker: str, source: str, dest: str, **fields: Any) -> Run:
        fields = {"trigger": "device_error", "rc": None, "where": None, "nodeid": "", **fields}
        device = int(worker.split("/dev")[1].split("/")[0])
        self.add(phase, "lifecycle", worker=worker, runtime="host_build_graph", device=device,
                 source=source, dest=dest, attempt=None, **fields)  # fmt: skip
        return self

    def test(self, phase: str, nodeid: str, outcome: str, **fields: Any) -> Run:
        fields = {
            "attempt": 1, "runtime": "host_build_graph", "device": 0, "worker": worker_key(),
            "poisoned": False, "message": "", "tail": "", "rc": None, "where": None,
            "duration_s": 0.25, **fields,
        }  # fmt: skip
        self.add(phase, "test", nodeid=nodeid, outcome=outcome, **fields)
        return self

    def fault(self, phase: str, nodeid: str, worker: str, *, heals: bool, **fields: Any) -> Run:
        """A test that hangs its card: the lifecycle, then its own failed record."""
        self.lifecycle(phase, worker, "healthy", "poisoned", nodeid=nodeid, rc=507046)
        if heals:
            self.lifecycle(phase, worker, "poisoned", "force_reset", nodeid=nodeid,
                           trigger="start_force_reset")  # fmt: skip
            self.lifecycle(phase, worker, "force_reset", "rebuilt", nodeid=nodeid,
                           trigger="rebuild_ok")  # fmt: skip
        return self.test(phase, nodeid, "failed", worker=worker, poisoned=True, message=HANG,
                         rc=507046, where=WHERE_HUNG, **fields)  # fmt: skip

    def give_up(self, phase: str, nodeid: str, worker: str) -> Run:
        """The card cannot be reset: the worker is skipped, its card quarantined."""
        self.lifecycle(phase, worker, "healthy", "poisoned", nodeid=nodeid, rc=507046)
        self.lifecycle(phase, worker, "poisoned", "force_reset", nodeid=nodeid,
                       trigger="start_force_reset")  # fmt: skip
        self.lifecycle(phase, worker, "force_reset", "skipped", nodeid=nodeid, trigger="give_up",
                       rc=507046, where="aclrtResetDeviceForce")  # fmt: skip
        return self.test(phase, nodeid, "failed", worker=worker, poisoned=True, message=HANG,
                         rc=507046, where=WHERE_HUNG)  # fmt: skip

    def poison_skip(self, phase: str, nodeid: str, worker: str, *, test: bool = True) -> Run:
        device = int(worker.split("/dev")[1].split("/")[0])
        self.add(phase, "poison_skip", selector=nodeid, nodeid=nodeid, runtime="host_build_graph",
                 worker=worker, device=device, reason=GAVE_UP)  # fmt: skip
        if test:
            self.test(phase, nodeid, "poison_skipped", worker=worker, message=GAVE_UP)
        return self

    def child(self, nodeid: str, **fields: Any) -> Run:
        fields = {
            "label": nodeid, "returncode": 0, "signal": None, "devices": [0, 1],
            "duration_s": 1.5, "timed_out": False, "reached_summary": True, "tail": "",
            "log": ".simpler/logs/child.log", "not_run": None, **fields,
        }  # fmt: skip
        self.add("resource", "child", nodeid=nodeid, **fields)
        return self

    def write(self, path: Path) -> Path:
        lines = (json.dumps(r, separators=(",", ":")) + "\n" for r in self.records)
        path.write_text("".join(lines))
        return path


def causes(attempts: list[Attempt]) -> dict[tuple[str, str, int], str | None]:
    return {(a.nodeid, a.phase, a.attempt): a.cause for a in attempts}


def attribute_run(run: Run, *, complete: bool = True) -> list[Attempt]:
    return attribute(run.run, [run.records], complete=complete)


def hang_with_victims(run: Run, *, reset_fails: bool) -> Run:
    """scenario_hang_victims: the trigger hangs its card; the victims follow on its worker."""
    worker = worker_key()
    run.start("l2").lifecycle("l2", worker, "created", "healthy", trigger="init_ok")
    if reset_fails:
        run.give_up("l2", TRIGGER, worker)
        for victim in VICTIMS:
            run.poison_skip("l2", victim, worker)
    else:  # --no-recovery: nothing resets the card, the victims fail on the poisoned worker
        run.fault("l2", TRIGGER, worker, heals=False)
        for victim in VICTIMS:
            run.test("l2", victim, "failed", message=UNUSABLE, rc=-1, where="run")
    run.lifecycle("l2", worker, "skipped" if reset_fails else "poisoned", "closed", trigger="close")
    run.end("l2", 1).start("resource").end("resource").start("retry")
    run.lifecycle("retry", worker, "created", "healthy", trigger="init_ok")
    for victim in VICTIMS if reset_fails else ():
        run.test("retry", victim, "recovered", attempt=2)
    run.test("retry", TRIGGER, "flaky", attempt=2)
    return run.end("retry").start("report").end("report", 0)


def retry_of_a_red_trigger(run: Run) -> Run:
    """A trigger that fails on every attempt, and a quarantined test that fails too."""
    worker = worker_key()
    run.start("l2").fault("l2", TRIGGER, worker, heals=True)
    run.test("l2", VICTIMS[0], "failed", message="AssertionError", quarantined=True)
    run.test("l2", VICTIMS[1], "passed").end("l2", 1).start("retry")
    for attempt in (2, 3):
        run.lifecycle("retry", worker, "created", "healthy", trigger="init_ok")
        run.fault("retry", TRIGGER, worker, heals=True, attempt=attempt)
    return run.end("retry", 1).start("report").end("report", 1)


def another_run(index: int) -> Run:
    return Run(f"20261204T0{index:05d}-run{index:03d}", 1_796_400_000.0 + index * 1_000)


def test_the_trigger_fails_by_its_own_fault_and_its_victims_by_the_device() -> None:
    attempts = causes(attribute_run(hang_with_victims(Run(), reset_fails=True)))
    assert attempts[(TRIGGER, "l2", 1)] == TEST
    assert all(attempts[(victim, "l2", 1)] == DEVICE for victim in VICTIMS)
    assert attempts[(TRIGGER, "retry", 2)] is None  # flaky: it passed
    assert all(attempts[(victim, "retry", 2)] is None for victim in VICTIMS)


def test_a_failure_on_a_worker_another_test_poisoned_is_the_device() -> None:
    attempts = causes(attribute_run(hang_with_victims(Run(), reset_fails=False)))
    assert attempts[(TRIGGER, "l2", 1)] == TEST
    assert all(attempts[(victim, "l2", 1)] == DEVICE for victim in VICTIMS)


def test_a_healed_worker_carries_no_earlier_fault() -> None:
    worker = worker_key(process="gw0")
    run = Run().start("l2").lifecycle("l2", worker, "created", "healthy", trigger="init_ok")
    run.fault("l2", TRIGGER, worker, heals=True)
    run.test("l2", VICTIMS[0], "failed", worker=worker, message="AssertionError: 2 != 3")
    attempts = causes(attribute_run(run.end("l2", 1)))
    assert attempts[(TRIGGER, "l2", 1)] == TEST
    assert attempts[(VICTIMS[0], "l2", 1)] == TEST  # rebuilt before it ran: its own failure


def test_a_failure_on_another_worker_is_not_the_poisoners() -> None:
    poisoned, other = worker_key(0, "gw0"), worker_key(1, "gw1")
    run = Run().start("l2").fault("l2", TRIGGER, poisoned, heals=False)
    run.test("l2", VICTIMS[0], "failed", worker=other, device=1, message="AssertionError")
    assert causes(attribute_run(run))[(VICTIMS[0], "l2", 1)] == TEST


def test_an_unnamed_poisoner_is_another_test_unless_the_failure_says_it_poisoned() -> None:
    worker = worker_key()
    run = Run().start("l2").lifecycle("l2", worker, "healthy", "poisoned", nodeid="")
    run.test("l2", VICTIMS[0], "failed", message=UNUSABLE)
    run.test("l2", VICTIMS[1], "failed", poisoned=True, message=HANG)
    attempts = causes(attribute_run(run))
    assert attempts[(VICTIMS[0], "l2", 1)] == DEVICE
    assert attempts[(VICTIMS[1], "l2", 1)] == TEST


CRASH_LOOP = "tests/it/scenarios/scenario_crash_loop.py::test_crashes_every_time"
STOPPED = "not run: the L2 session stopped after 5 worker crashes (--max-worker-restart 4)"


def test_a_crash_fails_its_test_and_the_tests_it_left_unrun_fail_by_the_device() -> None:
    crashed, unrun = f"{CRASH_LOOP}[4]", f"{CRASH_LOOP}[5]"
    run = Run().start("l2")
    run.test("l2", crashed, "failed", poisoned=True, worker=worker_key(0, "gw5"), crashed=crashed,
             message=f"worker gw5 crashed while running {crashed}")  # fmt: skip
    run.test("l2", unrun, "failed", worker=None, device=None, runtime=None, message=STOPPED)
    ended = "not run: the xdist session ended without running it, after 2 worker crash(es)"
    run.test("l2", f"{CRASH_LOOP}[6]", "failed", worker=None, device=None, runtime=None,
             message=ended)  # fmt: skip
    attempts = causes(attribute_run(run.end("l2", 1)))
    assert attempts[(crashed, "l2", 1)] == TEST
    assert attempts[(unrun, "l2", 1)] == DEVICE
    assert attempts[(f"{CRASH_LOOP}[6]", "l2", 1)] == DEVICE


def test_a_crash_record_that_names_another_test_is_the_device() -> None:
    neighbour, crashed = VICTIMS[0], f"{CRASH_LOOP}[0]"
    run = Run().start("l2")
    said = f"worker gw1 crashed while running {crashed}"
    run.test("l2", neighbour, "failed", crashed=crashed, message=said)
    long_id = f"{CRASH_LOOP}[{'x' * 400}]"  # the field names it whole, where a message is cut
    run.test("l2", long_id, "failed", crashed=long_id, message=said[:300])
    attempts = causes(attribute_run(run))
    assert attempts[(neighbour, "l2", 1)] == DEVICE
    assert attempts[(long_id, "l2", 1)] == TEST


def test_a_fresh_process_without_a_usable_device_is_the_device() -> None:
    refused = "no usable device in a fresh process: worker could not be initialized"
    run = Run().start("retry")
    run.test("retry", TRIGGER, "error", attempt=2, message=f"Failed: {refused}")  # pytest.fail
    run.test("retry", VICTIMS[0], "failed", attempt=2, message=refused)
    attempts = causes(attribute_run(run))
    assert attempts[(TRIGGER, "retry", 2)] == DEVICE
    assert attempts[(VICTIMS[0], "retry", 2)] == DEVICE


QUARANTINE_SUITE = "tests/it/scenarios/scenario_quarantine_multi.py"
BOTH_CARDS = f"{QUARANTINE_SUITE}::test_needs_both_cards"


def test_an_old_reports_child_not_placed_after_a_quarantine_fails_by_the_device() -> None:
    pooled = f"{QUARANTINE_SUITE}::test_pooled_launch"
    run = Run().start("l2").give_up("l2", pooled, worker_key(0, "gw0")).end("l2", 1)
    run.start("resource").add("resource", "quarantine", devices=[0],
                               reason="worker could not be reset in L2")  # fmt: skip
    run.child(BOTH_CARDS, returncode=None, devices=[], duration_s=0.0, reached_summary=False,
              not_run="not run: only 1 device(s) left outside quarantine 0")  # fmt: skip
    attempts = {(a.nodeid, a.phase): a for a in attribute_run(run.end("resource", 1))}
    stand_in = attempts[(BOTH_CARDS, "resource")]
    assert (stand_in.outcome, stand_in.cause, stand_in.label) == ("failed", DEVICE, BOTH_CARDS)
    assert stand_in.message == "not run: only 1 device(s) left outside quarantine 0"
    assert attempts[(pooled, "l2")].cause == TEST  # the test whose fault lost the card


def test_a_resource_child_not_placed_after_a_device_was_retired_fails_by_the_device() -> None:
    pooled = f"{QUARANTINE_SUITE}::test_pooled_launch"
    run = Run().start("l2").give_up("l2", pooled, worker_key(0, "gw0")).end("l2", 1)
    run.start("resource").add("resource", "device_retired", devices=[0], reason="L2")
    not_run = "not run: only 1 device(s) left that are not retired (retired: 0)"
    run.child(BOTH_CARDS, returncode=None, devices=[], duration_s=0.0, reached_summary=False,
              not_run=not_run)  # fmt: skip
    run.test("resource", pooled, "failed", device=0, worker=None, message="RuntimeError")
    attempts = causes(attribute_run(run.end("resource", 1)))
    assert attempts[(BOTH_CARDS, "resource", 1)] == DEVICE
    assert attempts[(pooled, "resource", 1)] == TEST  # its own fault made the card unusable


def test_a_test_on_a_card_an_old_report_quarantined_fails_by_the_device() -> None:
    pooled = f"{QUARANTINE_SUITE}::test_pooled_launch"
    run = Run().start("l2").give_up("l2", pooled, worker_key(0, "gw0")).end("l2", 1)
    run.start("resource").add("resource", "quarantine", devices=[0], reason="L2")
    run.test("resource", BOTH_CARDS, "failed", device=0, worker=None, message="RuntimeError")
    run.test("resource", pooled, "failed", device=0, worker=None, message="RuntimeError")
    attempts = causes(attribute_run(run))
    assert attempts[(BOTH_CARDS, "resource", 1)] == DEVICE
    assert attempts[(pooled, "resource", 1)] == TEST  # its own fault made the card unusable


RESOURCE_SUITE = "tests/it/scenarios/scenario_resource.py"


def test_children_the_session_timeout_stopped_fail_by_the_infrastructure() -> None:
    waiting, running = f"{RESOURCE_SUITE}::test_fails_an_assertion", f"{RESOURCE_SUITE}::test_x"
    run = Run().start("resource")
    run.child(waiting, returncode=None, devices=[], reached_summary=False,
              not_run="not run: stopped by session_timeout")  # fmt: skip
    run.child(running, returncode=None, signal="SIGTERM", timed_out=True, reached_summary=False)
    attempts = causes(attribute_run(run.end("resource", 1)))
    assert attempts[(waiting, "resource", 1)] == INFRA
    assert attempts[(running, "resource", 1)] == INFRA


def test_a_child_that_hung_or_crashed_by_itself_fails_by_its_test() -> None:
    hung, crashed = f"{RESOURCE_SUITE}::test_hangs", f"{RESOURCE_SUITE}::test_crashes_with_sigsegv"
    run = Run().start("resource")
    run.child(hung, returncode=None, signal="SIGTERM", timed_out=True, devices=[1])
    run.child(crashed, returncode=None, signal="SIGSEGV", devices=[0, 1])
    attempts = {a.nodeid: a for a in attribute_run(run.end("resource", 1))}
    assert attempts[hung].cause == TEST
    assert attempts[hung].device == 1
    assert attempts[crashed].cause == TEST
    assert attempts[crashed].message is not None and "SIGSEGV" in attempts[crashed].message


def test_children_stopped_by_a_signal_to_simpler_fail_by_the_infrastructure() -> None:
    killed, unstarted = f"{RESOURCE_SUITE}::test_a", f"{RESOURCE_SUITE}::test_b"
    run = Run().start("resource")
    run.child(unstarted, returncode=None, devices=[], not_run="not run: stopped by SIGTERM")
    run.child(killed, returncode=None, signal="SIGTERM")
    run.end("resource", 143, interrupted="SIGTERM")
    attempts = causes(attribute_run(run))
    assert attempts[(unstarted, "resource", 1)] == INFRA
    assert attempts[(killed, "resource", 1)] == INFRA


def test_a_child_with_a_test_record_stands_for_nothing_and_names_its_label() -> None:
    failing = f"{RESOURCE_SUITE}::test_fails_an_assertion"
    run = Run().start("resource")
    run.test("resource", failing, "failed", worker=None, message="AssertionError: wrong devices")
    run.child(failing, returncode=1, label="two cards")
    attempts = attribute_run(run.end("resource", 1))
    assert [(a.nodeid, a.cause, a.label) for a in attempts] == [(failing, TEST, "two cards")]


def test_a_resource_test_costs_its_childs_wall_not_only_its_own_call() -> None:
    """The plan of a matrix reads these durations: a Resource test costs its job a process."""
    alone = f"{RESOURCE_SUITE}::test_passes_on_its_device"
    grouped = f"{RESOURCE_SUITE}::test_in_a_group"
    run = Run().start("resource")
    run.test("resource", alone, "passed", worker=None, duration_s=0.3)
    run.child(alone, duration_s=1.7)
    run.test("resource", grouped, "passed", worker=None, duration_s=0.4)
    run.child("", label="a group of tests", duration_s=2.5)
    took = {a.nodeid: a.duration_s for a in attribute_run(run.end("resource"))}
    assert took == {alone: 1.7, grouped: 0.4}  # a group's child is no one test's


def test_an_incomplete_run_fails_by_the_infrastructure_and_keeps_the_real_cause() -> None:
    run = hang_with_victims(Run(), reset_fails=True)
    attempts = {(a.nodeid, a.phase): a for a in attribute_run(run, complete=False)}
    trigger, victim = attempts[(TRIGGER, "l2")], attempts[(VICTIMS[0], "l2")]
    assert (trigger.cause, trigger.own_cause) == (INFRA, TEST)
    assert (victim.cause, victim.own_cause) == (INFRA, DEVICE)
    assert attempts[(TRIGGER, "retry")].cause is None  # a pass stays a pass


def test_a_plain_skip_never_hides_a_poison_skip_and_a_later_record_wins() -> None:
    worker = worker_key()
    run = Run().start("l2").poison_skip("l2", VICTIMS[0], worker)
    run.test("l2", VICTIMS[0], "skipped", message="skipped by pytest")
    run.poison_skip("l2", VICTIMS[1], worker, test=False)  # its skip reaches pytest plainly
    run.test("l2", VICTIMS[1], "skipped", message=GAVE_UP)
    run.test("l2", TRIGGER, "failed", message="AssertionError")
    run.test("l2", TRIGGER, "passed")  # the same key again: the later record wins
    attempts = {a.nodeid: a for a in attribute_run(run)}
    assert [attempts[v].outcome for v in VICTIMS] == ["poison_skipped", "poison_skipped"]
    assert [attempts[v].cause for v in VICTIMS] == [DEVICE, DEVICE]
    assert (attempts[TRIGGER].outcome, attempts[TRIGGER].cause) == ("passed", None)


def test_a_registration_no_test_record_followed_stands_for_the_test() -> None:
    run = Run().start("l2").poison_skip("l2", VICTIMS[0], worker_key(3, "gw3"), test=False)
    (attempt,) = attribute_run(run)
    assert (attempt.outcome, attempt.cause, attempt.device) == ("poison_skipped", DEVICE, 3)
    assert attempt.message == GAVE_UP


def test_fields_are_carried_and_an_unreadable_outcome_is_a_failure() -> None:
    run = Run().start("l2")
    run.test("l2", TRIGGER, "failed", quarantined=True, message="E" * 900, duration_s=2.5)
    run.test("l2", VICTIMS[0], "", device="zero", runtime=7, attempt="one")
    attempts = {a.nodeid: a for a in attribute_run(run)}
    quarantined = attempts[TRIGGER]
    assert (quarantined.quarantined, quarantined.duration_s, quarantined.cause) == (1, 2.5, TEST)
    assert quarantined.message == "E" * 500
    assert quarantined.ts == run.records[1]["ts"]
    garbled = attempts[VICTIMS[0]]
    assert (garbled.outcome, garbled.cause, garbled.attempt) == ("unknown", TEST, 1)
    assert (garbled.device, garbled.runtime, garbled.quarantined) == (None, None, 0)


def test_a_record_short_of_fields_is_attributed_by_the_same_rules() -> None:
    run = Run().start("l2").fault("l2", TRIGGER, worker_key(), heals=False)
    run.add("l2", "test", nodeid=VICTIMS[0], outcome="failed", worker=worker_key())
    attempts = causes(attribute_run(run))
    assert attempts[(VICTIMS[0], "l2", 1)] == DEVICE


def test_each_source_has_its_own_lifecycle_and_sources_merge_in_any_order() -> None:
    # Two shards of one run on two machines, with the same worker key: a worker poisoned on
    # the first machine says nothing of a test on the second.
    first = Run(start=1_000.0).start("l2").fault("l2", TRIGGER, worker_key(), heals=False)
    second = Run(start=2_000.0).start("l2")
    second.test("l2", VICTIMS[0], "failed", message="AssertionError: its own")
    together = attribute(first.run, [first.records, second.records], complete=True)
    assert causes(together)[(VICTIMS[0], "l2", 1)] == TEST
    swapped = attribute(first.run, [second.records, first.records], complete=True)
    assert sorted(together) == sorted(swapped)


def test_the_later_record_of_one_key_wins_across_sources() -> None:
    early = Run(start=1_000.0).start("retry").test("retry", TRIGGER, "failed", attempt=2)
    late = Run(start=2_000.0).start("retry").test("retry", TRIGGER, "flaky", attempt=2)
    for parts in ([early.records, late.records], [late.records, early.records]):
        (attempt,) = [a for a in attribute(early.run, parts, complete=True) if a.attempt == 2]
        assert attempt.outcome == "flaky"


def test_a_plain_skip_from_another_source_never_hides_a_poison_skip() -> None:
    registered = Run(start=1_000.0).start("l2").poison_skip("l2", VICTIMS[0], worker_key())
    skipped = Run(start=2_000.0).start("l2").test("l2", VICTIMS[0], "skipped")
    for parts in ([registered.records, skipped.records], [skipped.records, registered.records]):
        (attempt,) = attribute(registered.run, parts, complete=True)
        assert (attempt.outcome, attempt.cause) == ("poison_skipped", DEVICE)
